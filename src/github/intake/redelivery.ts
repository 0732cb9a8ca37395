import type { Store } from "../../store/store.js";
import { callGitHub } from "../client/errors.js";
import type { GitHubAuth } from "../client/github.js";

/** One delivery as `GET /app/hook/deliveries` lists it. */
interface HookDelivery {
  id: number;
  guid: string;
  delivered_at: string;
  status_code: number;
}

/**
 * The failed deliveries worth asking for again: within `windowMs` of `now`, and with no
 * successful attempt under the same GUID (a redelivery keeps the GUID). The newest attempt of
 * each is returned. A delivery we recorded but failed to acknowledge is redelivered too: the
 * store refuses it as a duplicate and the sweep processes the recorded one.
 */
export function failedDeliveries(
  deliveries: HookDelivery[],
  now: number,
  windowMs: number,
): HookDelivery[] {
  const byGuid = new Map<string, HookDelivery[]>();
  for (const delivery of deliveries) {
    if (now - Date.parse(delivery.delivered_at) > windowMs) continue;
    byGuid.set(delivery.guid, [...(byGuid.get(delivery.guid) ?? []), delivery]);
  }
  const failed: HookDelivery[] = [];
  for (const attempts of byGuid.values()) {
    if (attempts.some((a) => a.status_code >= 200 && a.status_code < 300)) continue;
    const newest = attempts.reduce((a, b) =>
      Date.parse(b.delivered_at) > Date.parse(a.delivered_at) ? b : a,
    );
    failed.push(newest);
  }
  return failed;
}

/** At most this many pages of 100 deliveries are read per pass (a bound on API use). */
export const MAX_DELIVERY_PAGES = 20;

/**
 * GitHub does not retry failed deliveries by itself: this reconciler lists the app's recent
 * deliveries with the app's JWT (newest first, page by page back to the window, at most
 * {@link MAX_DELIVERY_PAGES} pages) and asks for the redelivery of failed ones, under a store
 * lease so one replica does it per period. One redelivery refused does not stop the others.
 */
export class RedeliveryReconciler {
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly deps: {
      store: Store;
      auth: () => GitHubAuth;
      holder: string;
      now: () => number;
      onError: (error: unknown) => void;
      /** How far back to look; default 6 hours. */
      windowMs?: number;
    },
  ) {}

  /** Runs one pass if this replica takes the lease; returns the redelivered delivery ids. */
  async reconcile(periodMs = 300_000): Promise<number[]> {
    const { store, holder, now } = this.deps;
    if (!(await store.acquireLease("webhook-redelivery", holder, now(), periodMs))) return [];
    const app = await this.deps.auth().app();
    const windowMs = this.deps.windowMs ?? 6 * 3_600_000;
    const since = now() - windowMs;
    const deliveries: HookDelivery[] = [];
    const pages = app.paginate.iterator("GET /app/hook/deliveries", { per_page: 100 });
    await callGitHub("list the app's webhook deliveries", async () => {
      let read = 0;
      for await (const { data } of pages) {
        deliveries.push(...(data as HookDelivery[]));
        const oldest = data.at(-1);
        if (++read >= MAX_DELIVERY_PAGES || oldest === undefined) break;
        if (Date.parse(oldest.delivered_at) < since) break;
      }
    });
    const redelivered: number[] = [];
    for (const delivery of failedDeliveries(deliveries, now(), windowMs)) {
      try {
        await callGitHub(`redeliver ${delivery.guid}`, () =>
          app.request("POST /app/hook/deliveries/{delivery_id}/attempts", {
            delivery_id: delivery.id,
          }),
        );
        redelivered.push(delivery.id);
      } catch (error) {
        this.deps.onError(error);
      }
    }
    return redelivered;
  }

  /** Reconciles every `periodMs` (default 5 minutes). */
  start(periodMs = 300_000): void {
    this.#timer = setInterval(() => {
      this.reconcile(periodMs).catch(this.deps.onError);
    }, periodMs);
    this.#timer.unref();
  }

  /** Stops the period. */
  stop(): void {
    clearInterval(this.#timer);
  }
}
