import { isRetryable } from "../../errors/app-error.js";
import type { DeliveryRecord, DeliveryTakeover, Store } from "../../store/store.js";
import { StoreError } from "../../store/store-error.js";
import { DeliveryNotRecordedError } from "./delivery-error.js";
import { laneOf } from "./delivery-lanes.js";
import {
  findLeftDeliveries,
  livenessLease,
  SWEEP_PAGE,
  type LeftDelivery,
} from "./delivery-sweep.js";
import { DeliveryWriter } from "./delivery-writer.js";
import { Batcher } from "../../runtime/concurrency/batcher.js";
import { idleAll, TaskSet } from "../../runtime/concurrency/task-set.js";

/** Turns one recorded delivery into engine events and GitHub calls. */
export type DeliveryHandler = (delivery: DeliveryRecord) => Promise<void>;

/**
 * How long the store may take to record a delivery before it is refused with a 5xx: well
 * inside GitHub's 10 s, and before @octokit/webhooks acknowledges on its own after 9 s.
 */
export const ACK_DEADLINE_MS = 5_000;
/**
 * How often the intake sweeps and renews its liveness lease (default). One Query and one
 * PutItem per replica each period.
 */
export const SWEEP_PERIOD_MS = 1_000;
/**
 * How many sweep periods a liveness lease lasts: a replica that died is taken for gone once
 * its lease lapsed, and the deliveries it held are taken over by the next sweep of another,
 * within about 6 s; a live replica whose renewals are late by less than four periods (a slow
 * store, a busy event loop) keeps its deliveries, however long handling them takes.
 */
export const LIVENESS_PERIODS = 5;

/** Deliveries queued in memory at most, by default; past it they wait in the store. */
const QUEUE_LIMIT = 1_000;
/** Deliveries handled at the same time at most, by default (each in its own lane). */
const LANES = 8;
/** Handled deliveries are marked processed once this many wait (one BatchWriteItem)... */
const MARK_GROUP = 25;
/**
 * ...or this long after the first of them, by default, so that a steady trickle shares its
 * marks: a mark only takes a delivery off the unprocessed index, for another process's sweep.
 */
const MARK_WINDOW_MS = 250;

/** A delivery queued for handling, with the claims it may take over when a sweep found it. */
interface Queued {
  delivery: DeliveryRecord;
  lane: string;
  takeover?: DeliveryTakeover;
}

/**
 * Webhook intake: a delivery is recorded in the store (deduplicated on its X-GitHub-Delivery
 * id; deliveries arriving together share one write, see {@link DeliveryWriter}) before Probot
 * acknowledges it, then claimed, handled and marked processed (in the background, in groups
 * while deliveries come quickly). Deliveries of different issues are handled side by side (see
 * {@link laneOf}), so one waiting on a lock holds up only its own issue. The queue in memory is
 * bounded: past `queueLimit` a recorded delivery is still acknowledged, and waits in the store
 * until the queue has room again, when a sweep pages it in. A crash after the acknowledgement
 * loses nothing: a sweep picks up deliveries left unprocessed for longer than `staleMs` by a
 * process that is gone (each process keeps a liveness lease while it runs), or by anyone for
 * longer than `abandonMs`. A duplicate delivery is refused by the store, and two copies that
 * raced past it are handled once, by whoever claims the delivery first.
 */
export class DeliveryIntake {
  readonly #queue: Queued[] = [];
  /** Deliveries queued, being handled, or handled and not yet marked: the sweep leaves them. */
  readonly #held = new Set<string>();
  /** Deliveries whose record is under way (perhaps written, not yet queued). */
  readonly #recording = new Set<string>();
  /** Lanes with a delivery being handled, and the handlings under way. */
  readonly #busyLanes = new Set<string>();
  readonly #active = new TaskSet();
  /**
   * Sweeps under way, and the deliveries marked processed meanwhile: a sweep's read may predate
   * their mark, and must not queue them again.
   */
  #sweeps = 0;
  readonly #markedWhileSweeping = new Set<string>();
  /** A recorded delivery found the queue full: it waits in the store for a sweep. */
  #spilled = false;
  /** The page-in of deliveries that waited in the store, while one is under way. */
  readonly #refills = new TaskSet();
  /** Handled deliveries, marked processed in groups (see {@link #markHandled}). */
  readonly #marks: Batcher<DeliveryRecord, void>;
  readonly #writer: DeliveryWriter;
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly deps: {
      store: Store;
      handle: DeliveryHandler;
      now: () => number;
      onError: (error: unknown, delivery: DeliveryRecord) => void;
      /** This process, as deliveries name their receiver. */
      holder: string;
      /** Age after which a delivery whose receiver is gone is taken over; default two sweep periods. */
      staleMs?: number;
      /** Age after which an unprocessed delivery is taken over whoever has it; default 15 min. */
      abandonMs?: number;
      /**
       * Longest a delivery's record may take before the delivery is answered 5xx instead of
       * acknowledged; default {@link ACK_DEADLINE_MS}.
       */
      ackDeadlineMs?: number;
      /** Deliveries queued in memory at most; default 1,000. */
      queueLimit?: number;
      /** Deliveries handled at the same time at most; default 8. */
      lanes?: number;
      /** How often {@link start} sweeps (its liveness lease lasts {@link LIVENESS_PERIODS}); default 1 s. */
      sweepPeriodMs?: number;
      /** Longest a handled delivery waits to be marked with others; default 250 ms. */
      markWindowMs?: number;
    },
  ) {
    this.#writer = new DeliveryWriter(deps.store, () => this.#pump());
    this.#marks = new Batcher({
      full: MARK_GROUP,
      windowMs: deps.markWindowMs ?? MARK_WINDOW_MS,
      unref: true,
      write: (handled) => this.#mark(handled),
    });
  }

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
    const mine = !this.#recording.has(deliveryId);
    this.#recording.add(deliveryId);
    // Queued once it is durable, in time for the ack or not.
    const landed = this.#writer
      .write(delivery)
      .then((recorded) => {
        if (recorded) this.#enqueue({ delivery, lane: laneOf(delivery) });
        return recorded;
      })
      .finally(() => {
        if (mine) this.#recording.delete(deliveryId);
      });
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<"late">((resolve) => {
      timer = setTimeout(() => resolve("late"), this.deps.ackDeadlineMs ?? ACK_DEADLINE_MS);
    });
    let recorded: boolean | "late";
    try {
      recorded = await Promise.race([landed, late]);
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
      landed.catch(() => undefined);
      throw new DeliveryNotRecordedError(error);
    }
    return recorded;
  }

  /** Queues a recorded delivery, unless the queue is full: then it waits in the store. */
  #enqueue(queued: Queued): void {
    if (this.#held.has(queued.delivery.deliveryId)) return;
    if (this.#queue.length >= (this.deps.queueLimit ?? QUEUE_LIMIT)) {
      this.#spilled = true;
      return;
    }
    this.#held.add(queued.delivery.deliveryId);
    this.#queue.push(queued);
    this.#pump();
  }

  /**
   * Queues deliveries left unprocessed: for longer than `staleMs` by a process that is gone
   * (or by this one, after a retryable failure), or for longer than `abandonMs` by anyone; and,
   * after the queue was full, this process's own deliveries that waited in the store. Queues
   * no more than the queue has room for.
   */
  async sweep(): Promise<number> {
    const room = (this.deps.queueLimit ?? QUEUE_LIMIT) - this.#queue.length;
    const wanted = Math.min(room, SWEEP_PAGE);
    if (wanted <= 0) return 0;
    const spilled = this.#spilled;
    this.#spilled = false;
    this.#sweeps++;
    try {
      const left = await findLeftDeliveries({
        store: this.deps.store,
        holder: this.deps.holder,
        now: this.deps.now(),
        staleMs: this.deps.staleMs ?? 2 * SWEEP_PERIOD_MS,
        abandonMs: this.deps.abandonMs ?? 15 * 60_000,
        wanted,
        ownAtAnyAge: spilled,
        inHand: (id) => this.#held.has(id) || this.#recording.has(id),
      });
      return this.#queueFound(left, wanted, spilled);
    } catch (error) {
      // The deliveries that waited in the store still do: the next pump or sweep tries again.
      if (spilled) this.#spilled = true;
      throw error;
    } finally {
      if (--this.#sweeps === 0) this.#markedWhileSweeping.clear();
    }
  }

  #queueFound(left: LeftDelivery[], wanted: number, spilled: boolean): number {
    // More of this process's own may wait in the store.
    if (spilled && left.length >= wanted) this.#spilled = true;
    // Another sweep, or a record, may have queued some meanwhile, or handled them.
    const fresh = left
      .filter(
        ({ delivery: { deliveryId } }) =>
          !this.#held.has(deliveryId) && !this.#markedWhileSweeping.has(deliveryId),
      )
      .map((found): Queued => ({ ...found, lane: laneOf(found.delivery) }));
    for (const queued of fresh) this.#held.add(queued.delivery.deliveryId);
    this.#queue.push(...fresh);
    this.#pump();
    return fresh.length;
  }

  /**
   * Renews this process's liveness lease, {@link LIVENESS_PERIODS} sweep periods long: while it
   * holds, other processes leave the deliveries it received to it.
   */
  async heartbeat(periodMs = this.deps.sweepPeriodMs ?? SWEEP_PERIOD_MS): Promise<void> {
    const { store, holder, now } = this.deps;
    await store.acquireLease(livenessLease(holder), holder, now(), LIVENESS_PERIODS * periodMs);
  }

  /**
   * Keeps this process's liveness lease (see {@link heartbeat}) and sweeps, now and every
   * `periodMs`; resolves when the first round is done.
   */
  start(periodMs = this.deps.sweepPeriodMs ?? SWEEP_PERIOD_MS): Promise<void> {
    const tick = async () => {
      await this.heartbeat(periodMs);
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

  /**
   * Waits until every queued delivery was handled and marked processed (and those waiting in
   * the store paged in).
   */
  idle(): Promise<void> {
    return idleAll([this.#active, this.#marks, this.#refills]);
  }

  /**
   * Starts handling queued deliveries while lanes are free: the first queued delivery of each
   * free lane, so a lane's deliveries keep their order and a busy lane holds up no other; none
   * while a record is being written, so that handling never slows an acknowledgement (the
   * store serves requests in turn). Pages in the deliveries that waited in the store once the
   * queue is half empty.
   */
  #pump(): void {
    // The writer pumps again once it is idle.
    if (this.#writer.busy) return;
    while (this.#active.size < (this.deps.lanes ?? LANES)) {
      const next = this.#queue.findIndex((queued) => !this.#busyLanes.has(queued.lane));
      if (next < 0) break;
      const [queued] = this.#queue.splice(next, 1);
      if (queued === undefined) break;
      this.#busyLanes.add(queued.lane);
      void this.#active.add(this.#handleOne(queued)).finally(() => {
        this.#busyLanes.delete(queued.lane);
        this.#pump();
      });
    }
    const half = (this.deps.queueLimit ?? QUEUE_LIMIT) / 2;
    if (this.#spilled && !this.#refills.busy() && this.#queue.length <= half) {
      // After a failed read, the next handling done or the periodic sweep tries again.
      void this.#refills.add(this.sweep()).then(
        () => this.#pump(),
        (error: unknown) => this.deps.onError(error, sweepRecord(this.deps.now())),
      );
    }
  }

  /** Claims a delivery and handles it; a copy another process claimed is left to it. */
  async #handleOne({ delivery, takeover }: Queued): Promise<void> {
    const { store, holder, now } = this.deps;
    try {
      if (!(await store.claimDelivery(delivery.deliveryId, holder, now(), takeover))) {
        this.#held.delete(delivery.deliveryId);
        return;
      }
      await this.deps.handle(delivery);
      this.#markHandled(delivery);
    } catch (error) {
      this.deps.onError(error, delivery);
      // A retryable failure stays unprocessed for the sweep; anything else will not improve.
      if (isRetryable(error)) this.#held.delete(delivery.deliveryId);
      else this.#markHandled(delivery);
    }
  }

  /**
   * Marks a handled delivery processed, in the background and in groups: one write at a time,
   * started once {@link MARK_GROUP} deliveries wait or `markWindowMs` after the first.
   * Until it is marked, a delivery stays held here, so this process's sweeps leave it alone.
   */
  #markHandled(delivery: DeliveryRecord): void {
    void this.#marks.add(delivery);
  }

  /** Marks a group processed; a failure is reported, and the sweep finds them again. */
  async #mark(handled: DeliveryRecord[]): Promise<void[]> {
    await this.deps.store
      .markDeliveriesProcessed(handled, this.deps.now())
      .catch((error: unknown) => handled.forEach((d) => this.deps.onError(error, d)));
    for (const done of handled) {
      this.#held.delete(done.deliveryId);
      if (this.#sweeps > 0) this.#markedWhileSweeping.add(done.deliveryId);
    }
    return handled.map(() => undefined);
  }
}

export { livenessLease };

function sweepRecord(at: number): DeliveryRecord {
  return { deliveryId: "(sweep)", event: "sweep", payload: null, receivedAt: at };
}
