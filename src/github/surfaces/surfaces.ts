import { isRetryable } from "../../errors/app-error.js";
import { KeyedQueue } from "../../runtime/concurrency/keyed-queue.js";
import { idleAll, TaskSet, type Idler } from "../../runtime/concurrency/task-set.js";
import { SurfaceWriter, type SurfaceWriterDeps } from "./surface-writer.js";

export type { PullReady } from "./surface-writer.js";

/** How many times a run's sync is tried in a row when it fails retryably. */
const SYNC_ATTEMPTS = 5;

/** How long a replica may hold a run's surfaces (released when its sync ends). */
const SURFACE_LEASE_MS = 15_000;
/** How many times a sync waits for another replica's sync of the run before giving up. */
const BUSY_ATTEMPTS = 20;

/** What {@link Surfaces} are made with: the writer's parts, and how syncs are spaced. */
export interface SurfacesDeps extends SurfaceWriterDeps {
  /**
   * This replica, as leases name their holder, when replicas share the store: a run's
   * surfaces are written under a lease, by one replica at a time, from the memo in the store.
   */
  holder?: string;
  /** How long a sync waits for more transitions to fold in; default 250 ms. */
  debounceMs?: number;
}

/** An interactive sync's failed tries in a row, which space its next try out. */
interface Tries {
  failures: number;
  busy: number;
}

/**
 * Keeps a run's GitHub surfaces in step with its state (a {@link SurfaceWriter} writes them).
 * Syncs of one run are serialised and coalesced on a {@link KeyedQueue}: a burst of transitions
 * costs one sync of the latest state. Resyncs (after a restart) are a background lane: one run
 * at a time, and only while no interactive sync is running or waiting, so that a reply or the
 * next node's check run never queues behind a restart's resync of many runs.
 */
export class Surfaces implements Idler {
  readonly #writer: SurfaceWriter;
  /** Every sync of a run, interactive or a resync, in order under the run's id. */
  readonly #syncs = new KeyedQueue();
  /** Runs with an interactive sync running or asked for, with its tries so far. */
  readonly #interactive = new Map<string, Tries>();
  /** Runs waiting for a background resync, oldest first. */
  readonly #backlog = new Set<string>();
  /** The background lane's drain, while it has work. */
  readonly #lane = new TaskSet();
  #draining = false;

  constructor(private readonly deps: SurfacesDeps) {
    this.#writer = new SurfaceWriter(deps);
  }

  /** Asks for a sync of `runId`'s surfaces (soon, once, with its latest state). */
  request(runId: string): void {
    // This sync covers what a waiting resync of the run would do.
    this.#backlog.delete(runId);
    if (!this.#interactive.has(runId)) this.#interactive.set(runId, { failures: 0, busy: 0 });
    // A resync of this run under way finishes first: syncs of a run never overlap.
    void this.#syncs.coalesce(
      runId,
      () => this.#syncAsked(runId),
      () => this.#debounce(runId),
    );
  }

  /**
   * A burst of transitions (a node ending, the next one starting) becomes one sync; a sync
   * again after a failure, or after another replica's sync, waits longer each time.
   */
  #debounce(runId: string): Promise<void> {
    const tries = this.#interactive.get(runId);
    const failed = tries === undefined ? 0 : tries.failures + tries.busy;
    const wait = (this.deps.debounceMs ?? 250) * 2 ** Math.min(failed, 4);
    return new Promise((resolve) => setTimeout(resolve, wait));
  }

  async #syncAsked(runId: string): Promise<void> {
    const tries = this.#interactive.get(runId) ?? { failures: 0, busy: 0 };
    let again = false;
    try {
      // Another replica syncing the run now may have read it before this transition.
      if (await this.sync(runId)) tries.failures = tries.busy = 0;
      else again = ++tries.busy < BUSY_ATTEMPTS;
    } catch (error) {
      this.deps.onError(error, runId);
      // GitHub's outage or rate limit would leave the run's last state unshown: sync again
      // (a few times), finding the surfaces afresh by key, since a failed write may have
      // landed: from an empty memo, not the one in the store.
      this.#writer.forget(runId);
      again = isRetryable(error) && ++tries.failures < SYNC_ATTEMPTS;
    } finally {
      // The run's interactive syncs end here unless another is asked for (or this one again).
      if (again) this.request(runId);
      else if (!this.#syncs.waits(runId)) this.#interactive.delete(runId);
    }
  }

  /**
   * Asks for a background resync of `runId` (after a restart): it waits for the interactive
   * syncs, and other runs' resyncs, to be done.
   */
  resync(runId: string): void {
    if (this.#interactive.has(runId)) return;
    this.#backlog.add(runId);
    if (this.#draining) return;
    this.#draining = true;
    void this.#lane.add(this.#drainBacklog());
  }

  async #drainBacklog(): Promise<void> {
    try {
      for (;;) {
        // Interactive syncs first: the backlog waits while any runs or waits for its debounce.
        while (this.#interactive.size > 0) await this.#syncs.idle();
        const [runId] = this.#backlog;
        if (runId === undefined) return;
        this.#backlog.delete(runId);
        // A run another replica is syncing now needs no resync from this one.
        await this.#syncs.run(runId, () =>
          this.sync(runId).then(
            () => undefined,
            (error: unknown) => this.deps.onError(error, runId),
          ),
        );
      }
    } finally {
      this.#draining = false;
    }
  }

  busy(): boolean {
    return this.#syncs.busy() || this.#lane.busy();
  }

  /** Resolves once the syncs of `runId` asked for so far, and their retries, are done. */
  shown(runId: string): Promise<void> {
    return this.#syncs.idleOf(runId);
  }

  /** Waits until no sync is running or asked for, in either lane. */
  idle(): Promise<void> {
    return idleAll([this.#syncs, this.#lane]);
  }

  /**
   * Brings every surface of `runId` up to date now; false when another replica is doing so
   * (it holds the run's surface lease).
   */
  async sync(runId: string): Promise<boolean> {
    const { store, holder } = this.deps;
    const lease = `surfaces/${runId}`;
    if (
      holder !== undefined &&
      !(await store.acquireLease(lease, holder, Date.now(), SURFACE_LEASE_MS))
    )
      return false;
    try {
      await this.#writer.write(runId);
      return true;
    } finally {
      if (holder !== undefined) {
        // Another replica may write the surfaces next: the memo to start from is the store's.
        this.#writer.drop(runId);
        await store.releaseLease(lease, holder);
      }
    }
  }
}
