import type { DeliveryRecord, Store } from "../store/store.js";
import { isRetryable } from "./errors.js";

/** Turns one recorded delivery into engine events and GitHub calls. */
export type DeliveryHandler = (delivery: DeliveryRecord) => Promise<void>;

/**
 * Webhook intake: a delivery is recorded in the store (deduplicated on its X-GitHub-Delivery
 * id) before Probot acknowledges it, then processed and marked processed (in groups, while
 * deliveries queue up). A crash after the acknowledgement loses nothing: a sweep picks up
 * deliveries left unprocessed for longer than `staleMs`. A duplicate delivery is refused by
 * the store and starts nothing.
 */
export class DeliveryIntake {
  readonly #queue: DeliveryRecord[] = [];
  #draining: Promise<void> | undefined;
  /** Deliveries being handled or handled and not yet marked, which the sweep must not queue. */
  readonly #handling = new Set<string>();
  /** Deliveries handled, to mark processed. */
  readonly #handled: DeliveryRecord[] = [];
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly deps: {
      store: Store;
      handle: DeliveryHandler;
      now: () => number;
      onError: (error: unknown, delivery: DeliveryRecord) => void;
      /** Age after which an unprocessed delivery is taken as left behind; default 60 s. */
      staleMs?: number;
    },
  ) {}

  /** Records a delivery durably and queues it; false for a duplicate. Resolves before the ack. */
  async record(deliveryId: string, event: string, payload: unknown): Promise<boolean> {
    const delivery: DeliveryRecord = { deliveryId, event, payload, receivedAt: this.deps.now() };
    if (!(await this.deps.store.recordDelivery(delivery))) return false;
    this.#queue.push(delivery);
    this.#kick();
    return true;
  }

  /** Queues deliveries left unprocessed (by a crashed process) for longer than `staleMs`. */
  async sweep(): Promise<number> {
    const cutoff = this.deps.now() - (this.deps.staleMs ?? 60_000);
    const left = (await this.deps.store.unprocessedDeliveries(100)).filter(
      (delivery) =>
        delivery.receivedAt <= cutoff &&
        !this.#handling.has(delivery.deliveryId) &&
        !this.#queue.some((q) => q.deliveryId === delivery.deliveryId),
    );
    this.#queue.push(...left);
    this.#kick();
    return left.length;
  }

  /** Sweeps every `periodMs` (default 30 s). */
  start(periodMs = 30_000): void {
    this.#timer = setInterval(() => {
      this.sweep().catch((error: unknown) =>
        this.deps.onError(error, sweepRecord(this.deps.now())),
      );
    }, periodMs);
    this.#timer.unref();
  }

  /** Stops sweeping. */
  stop(): void {
    clearInterval(this.#timer);
  }

  /** Waits until every queued delivery was handled. */
  async idle(): Promise<void> {
    while (this.#draining !== undefined) await this.#draining;
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
        this.#handled.push(delivery);
      } catch (error) {
        this.deps.onError(error, delivery);
        // A retryable failure stays unprocessed for the sweep; anything else will not improve.
        if (isRetryable(error)) this.#handling.delete(delivery.deliveryId);
        else this.#handled.push(delivery);
      }
      // Marked together once the queue is empty, or 25 at a time while it is not.
      if (this.#queue.length === 0 || this.#handled.length >= 25) await this.#markHandled();
    }
  }

  async #markHandled(): Promise<void> {
    const handled = this.#handled.splice(0);
    await this.deps.store
      .markDeliveriesProcessed(handled, this.deps.now())
      .catch((error: unknown) => handled.forEach((delivery) => this.deps.onError(error, delivery)));
    for (const delivery of handled) this.#handling.delete(delivery.deliveryId);
  }
}

function sweepRecord(at: number): DeliveryRecord {
  return { deliveryId: "(sweep)", event: "sweep", payload: null, receivedAt: at };
}
