import type { DeliveryRecord, Store } from "../store/store.js";
import { isRetryable } from "./errors.js";

/** Turns one recorded delivery into engine events and GitHub calls. */
export type DeliveryHandler = (delivery: DeliveryRecord) => Promise<void>;

/**
 * Webhook intake: a delivery is recorded in the store (deduplicated on its X-GitHub-Delivery
 * id) before Probot acknowledges it, then processed from the store and marked processed. A
 * crash after the acknowledgement loses nothing: a sweep picks up deliveries left unprocessed
 * for longer than `staleMs`. A duplicate delivery is refused by the store and starts nothing.
 */
export class DeliveryIntake {
  readonly #queue: DeliveryRecord[] = [];
  #draining: Promise<void> | undefined;
  /** The delivery being handled now, which the sweep must not queue again. */
  #handling: string | undefined;
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
        delivery.deliveryId !== this.#handling &&
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
      this.#handling = delivery.deliveryId;
      try {
        await this.deps.handle(delivery);
      } catch (error) {
        this.deps.onError(error, delivery);
        // A retryable failure stays unprocessed for the sweep; anything else will not improve.
        if (isRetryable(error)) continue;
      } finally {
        this.#handling = undefined;
      }
      await this.deps.store
        .markDeliveryProcessed(delivery.deliveryId, this.deps.now())
        .catch((error: unknown) => this.deps.onError(error, delivery));
    }
  }
}

function sweepRecord(at: number): DeliveryRecord {
  return { deliveryId: "(sweep)", event: "sweep", payload: null, receivedAt: at };
}
