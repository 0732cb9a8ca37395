import type { DeliveryRecord, DeliveryTakeover, Store } from "../../store/store.js";

/** How many unprocessed deliveries a sweep reads at a time, and queues at most. */
export const SWEEP_PAGE = 100;
/** How many pages one sweep reads at most (a bound on its reads; the next sweep goes on). */
const SWEEP_PAGES = 20;

/** A delivery a sweep found to handle, and the claims on it that it may take over. */
export interface LeftDelivery {
  delivery: DeliveryRecord;
  takeover: DeliveryTakeover;
}

/** What a sweep looks for. */
export interface SweepScope {
  store: Store;
  /** This process, as deliveries name their receiver. */
  holder: string;
  now: number;
  /** Age after which a delivery whose receiver is gone (or this process) is taken over. */
  staleMs: number;
  /** Age after which an unprocessed delivery is taken over whoever has it. */
  abandonMs: number;
  /** How many to find at most. */
  wanted: number;
  /** Whether this process's own deliveries count at any age (they waited for queue room). */
  ownAtAnyAge: boolean;
  /** Deliveries this process has in hand already. */
  inHand: (deliveryId: string) => boolean;
}

/**
 * The unprocessed deliveries a process should handle now, oldest first: left for longer than
 * `staleMs` by a process that is gone (or by this one, after a retryable failure), or for
 * longer than `abandonMs` by anyone, and with `ownAtAnyAge` its own of any age. Another
 * process's delivery is left while its holder lives: the replica that claimed it (whoever
 * recorded it), or while it is unclaimed the replica that recorded it.
 */
export async function findLeftDeliveries(scope: SweepScope): Promise<LeftDelivery[]> {
  const { store, holder, now, wanted, ownAtAnyAge } = scope;
  const stale = now - scope.staleMs;
  const abandoned = now - scope.abandonMs;
  const isGone = goneProbe(store, holder, now);
  const left: LeftDelivery[] = [];
  // Page past deliveries a live replica is busy with: what is behind them may be anybody's.
  let after: DeliveryRecord | undefined;
  for (let page = 0; page < SWEEP_PAGES && left.length < wanted; page++) {
    const found = await store.unprocessedDeliveries(SWEEP_PAGE, after);
    // Another process's stale deliveries, not yet abandoned, go by who claimed them: one read
    // of their claims per page, and none when the page has no such delivery.
    const othersStale = (delivery: DeliveryRecord) =>
      delivery.receivedBy !== undefined &&
      delivery.receivedBy !== holder &&
      delivery.receivedAt <= stale &&
      delivery.receivedAt > abandoned &&
      !scope.inHand(delivery.deliveryId);
    const claimers = await store.deliveryClaimers(
      found.filter(othersStale).map((delivery) => delivery.deliveryId),
      now,
    );
    for (const delivery of found) {
      const { deliveryId, receivedAt, receivedBy } = delivery;
      if (left.length >= wanted) break;
      if (scope.inHand(deliveryId)) continue;
      const others = receivedBy !== undefined && receivedBy !== holder;
      if (receivedAt > stale && (others || !ownAtAnyAge)) continue;
      const takeover: DeliveryTakeover = { before: abandoned };
      if (others && receivedAt > abandoned) {
        // Whoever holds it: its claimer (the receiver, or a replica that took it over or got a
        // copy), or while it is unclaimed its receiver. Taken over only from a dead holder, by
        // a claim that holds only while the claim is still that holder's.
        const claimer = claimers.get(deliveryId) ?? receivedBy;
        if (claimer !== holder && !(await isGone(claimer))) continue;
        takeover.from = claimer;
      }
      left.push({ delivery, takeover });
    }
    after = found.at(-1);
    if (found.length < SWEEP_PAGE) break;
    if (!ownAtAnyAge && (after?.receivedAt ?? 0) > stale) break;
  }
  return left;
}

/** Whether a receiver is gone: taking its liveness lease for a millisecond succeeds only then. */
function goneProbe(
  store: Store,
  holder: string,
  now: number,
): (receiver: string) => Promise<boolean> {
  const gone = new Map<string, Promise<boolean>>();
  return (receiver) => {
    let probe = gone.get(receiver);
    if (probe === undefined) {
      probe = store.acquireLease(livenessLease(receiver), `${holder}#probe`, now, 1);
      gone.set(receiver, probe);
    }
    return probe;
  };
}

/** The lease a process holds while it runs, so others leave the deliveries it has alone. */
export function livenessLease(holder: string): string {
  return `intake-alive:${holder}`;
}
