import { isRetryable } from "../errors/app-error.js";
import type { DeliveryRecord, Store } from "../store/store.js";
import { StoreError } from "../store/store-error.js";
import { DeliveryNotRecordedError } from "./delivery-error.js";

/** Turns one recorded delivery into engine events and GitHub calls. */
export type DeliveryHandler = (delivery: DeliveryRecord) => Promise<void>;

/**
 * How long the store may take to record a delivery before it is refused with a 5xx: well
 * inside GitHub's 10 s, and before @octokit/webhooks acknowledges on its own after 9 s.
 */
export const ACK_DEADLINE_MS = 5_000;

/** How many unprocessed deliveries a sweep reads at a time, and queues at most. */
const SWEEP_PAGE = 100;
/** How many pages one sweep reads at most (a bound on its reads; the next sweep goes on). */
const SWEEP_PAGES = 20;

/**
 * Webhook intake: a delivery is recorded in the store (deduplicated on its X-GitHub-Delivery
 * id) before Probot acknowledges it, then processed and marked processed (in the background,
 * in groups while deliveries come quickly). A crash after the acknowledgement loses nothing: a
 * sweep picks up deliveries left unprocessed for longer than `staleMs` by a process that is
 * gone (each process keeps a liveness lease while it runs), or by anyone for longer than
 * `abandonMs`. A duplicate delivery is refused by the store and starts nothing.
 */
export class DeliveryIntake {
  readonly #queue: DeliveryRecord[] = [];
  #draining: Promise<void> | undefined;
  #marking: Promise<void> | undefined;
  /** Deliveries being handled or handled and not yet marked, which the sweep must not queue. */
  readonly #handling = new Set<string>();
  /** Deliveries handled, waiting for the write that marks them processed. */
  readonly #handled: DeliveryRecord[] = [];
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly deps: {
      store: Store;
      handle: DeliveryHandler;
      now: () => number;
      onError: (error: unknown, delivery: DeliveryRecord) => void;
      /** This process, as deliveries name their receiver. */
      holder: string;
      /** Age after which a delivery whose receiver is gone is taken over; default 60 s. */
      staleMs?: number;
      /** Age after which an unprocessed delivery is taken over whoever has it; default 15 min. */
      abandonMs?: number;
      /**
       * Longest a delivery's record may take before the delivery is answered 5xx instead of
       * acknowledged; default {@link ACK_DEADLINE_MS}.
       */
      ackDeadlineMs?: number;
    },
  ) {}

  /** Deliveries recorded and waiting in this process's queue. */
  get depth(): number {
    return this.#queue.length;
  }

  /**
   * Records a delivery durably and queues it; false for a duplicate. Resolves before the ack;
   * when the store fails, or has not answered within the acknowledgement deadline, logs why and
   * throws a {@link DeliveryNotRecordedError}, so GitHub gets a 5xx without the store's words and
   * the delivery is not acknowledged (GitHub's redelivery applies). A write that lands after
   * its deadline is handled all the same, once.
   */
  async record(deliveryId: string, event: string, payload: unknown): Promise<boolean> {
    const delivery: DeliveryRecord = {
      deliveryId,
      event,
      payload,
      receivedAt: this.deps.now(),
      receivedBy: this.deps.holder,
    };
    const writing = this.deps.store.recordDelivery(delivery);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<"late">((resolve) => {
      timer = setTimeout(() => resolve("late"), this.deps.ackDeadlineMs ?? ACK_DEADLINE_MS);
    });
    let recorded: boolean | "late";
    try {
      recorded = await Promise.race([writing, late]);
    } catch (error) {
      this.deps.onError(error, { ...delivery, payload: null });
      throw new DeliveryNotRecordedError(error);
    } finally {
      clearTimeout(timer);
    }
    if (recorded === "late") {
      const error = new StoreError("unavailable", "the store did not record the delivery in time", {
        retryable: true,
      });
      this.deps.onError(error, { ...delivery, payload: null });
      writing.then((done) => done && this.#enqueue(delivery)).catch(() => undefined);
      throw new DeliveryNotRecordedError(error);
    }
    if (recorded) this.#enqueue(delivery);
    return recorded;
  }

  #enqueue(delivery: DeliveryRecord): void {
    this.#queue.push(delivery);
    this.#kick();
  }

  /**
   * Queues deliveries left unprocessed: for longer than `staleMs` by a process that is gone
   * (or by this one, after a retryable failure), or for longer than `abandonMs` by anyone.
   */
  async sweep(): Promise<number> {
    const now = this.deps.now();
    const stale = now - (this.deps.staleMs ?? 60_000);
    const abandoned = now - (this.deps.abandonMs ?? 15 * 60_000);
    // Taking a receiver's liveness lease for a millisecond succeeds only when it lapsed.
    const gone = new Map<string, Promise<boolean>>();
    const isGone = (receiver: string) => {
      let probe = gone.get(receiver);
      if (probe === undefined) {
        probe = this.deps.store.acquireLease(
          livenessLease(receiver),
          `${this.deps.holder}#probe`,
          now,
          1,
        );
        gone.set(receiver, probe);
      }
      return probe;
    };
    const left: DeliveryRecord[] = [];
    // Page past deliveries a live replica is busy with: what is behind them may be anybody's.
    let after: DeliveryRecord | undefined;
    for (let page = 0; page < SWEEP_PAGES && left.length < SWEEP_PAGE; page++) {
      const found = await this.deps.store.unprocessedDeliveries(SWEEP_PAGE, after);
      for (const delivery of found) {
        const { deliveryId, receivedAt, receivedBy } = delivery;
        if (receivedAt > stale || this.#handling.has(deliveryId)) continue;
        if (this.#queue.some((queued) => queued.deliveryId === deliveryId)) continue;
        const others = receivedBy !== undefined && receivedBy !== this.deps.holder;
        if (others && receivedAt > abandoned && !(await isGone(receivedBy))) continue;
        left.push(delivery);
      }
      after = found.at(-1);
      if (found.length < SWEEP_PAGE || (after?.receivedAt ?? 0) > stale) break;
    }
    this.#queue.push(...left);
    this.#kick();
    return left.length;
  }

  /**
   * Keeps this process's liveness lease (three periods long) and sweeps, now and every
   * `periodMs`; resolves when the first round is done.
   */
  start(periodMs = 30_000): Promise<void> {
    const tick = async () => {
      await this.deps.store.acquireLease(
        livenessLease(this.deps.holder),
        this.deps.holder,
        this.deps.now(),
        3 * periodMs,
      );
      await this.sweep();
    };
    const run = () =>
      tick().catch((error: unknown) => this.deps.onError(error, sweepRecord(this.deps.now())));
    this.#timer = setInterval(() => void run(), periodMs);
    this.#timer.unref();
    return run();
  }

  /** Stops sweeping. */
  stop(): void {
    clearInterval(this.#timer);
  }

  /** Waits until every queued delivery was handled. */
  async idle(): Promise<void> {
    while (this.#draining !== undefined || this.#marking !== undefined) {
      await this.#draining;
      await this.#marking;
    }
  }

  #kick(): void {
    this.#draining ??= this.#drain().finally(() => {
      this.#draining = undefined;
    });
  }

  async #drain(): Promise<void> {
    for (
      let delivery = this.#queue.shift();
      delivery !== undefined;
      delivery = this.#queue.shift()
    ) {
      this.#handling.add(delivery.deliveryId);
      try {
        await this.deps.handle(delivery);
        this.#markHandled(delivery);
      } catch (error) {
        this.deps.onError(error, delivery);
        // A retryable failure stays unprocessed for the sweep; anything else will not improve.
        if (isRetryable(error)) this.#handling.delete(delivery.deliveryId);
        else this.#markHandled(delivery);
      }
    }
  }

  /**
   * Marks a handled delivery processed, in the background: one write at a time, so the
   * deliveries handled while one is under way are marked together by the next.
   */
  #markHandled(delivery: DeliveryRecord): void {
    this.#handled.push(delivery);
    this.#marking ??= (async () => {
      while (this.#handled.length > 0) {
        const handled = this.#handled.splice(0);
        await this.deps.store
          .markDeliveriesProcessed(handled, this.deps.now())
          .catch((error: unknown) => handled.forEach((d) => this.deps.onError(error, d)));
        for (const done of handled) this.#handling.delete(done.deliveryId);
      }
    })().finally(() => {
      this.#marking = undefined;
    });
  }
}

function sweepRecord(at: number): DeliveryRecord {
  return { deliveryId: "(sweep)", event: "sweep", payload: null, receivedAt: at };
}

/** The lease a process holds while it runs, so others leave the deliveries it has alone. */
export function livenessLease(holder: string): string {
  return `intake-alive:${holder}`;
}
