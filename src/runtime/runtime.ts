import type { Effect, RunDefinition, RunEvent, RunSnapshot, StepResult } from "../engine/model.js";
import { isFinal } from "../engine/model.js";
import { createSnapshot, step } from "../engine/step.js";
import { LruMap } from "../memory/lru-map.js";
import type { Receipt, Store, StoredRun } from "../store/store.js";
import { isRetryable } from "../errors/app-error.js";
import { StoreError } from "../store/store-error.js";
import { AfterEffects } from "./after-effects.js";
import type { Delivery, EffectPerformer, EventSink, Refusal, RunDriver } from "./ports.js";
import {
  RunRepository,
  storedDocument,
  type LoadedRun,
  type RunDocument,
} from "../store/run-repository.js";
import { createRun, noteRun } from "./admission.js";
import { KeyedQueue } from "./concurrency/keyed-queue.js";
import { idleAll, TaskSet } from "./concurrency/task-set.js";
import { RuntimeError } from "./runtime-error.js";

export type { Delivery, Refusal } from "./ports.js";
export type { LoadedRun, RunDocument } from "../store/run-repository.js";

/** Dependencies of the runtime, passed explicitly. */
export interface RuntimeOptions {
  store: Store;
  performer: EffectPerformer;
  now: () => number;
  /**
   * Told after every applied transition (progress output, GitHub surfaces, admission), with
   * the runtime to offer further events to.
   */
  onTransition?: (
    run: RunDocument,
    effects: Effect[],
    event: RunEvent,
    runs: RunDriver,
    repo: string,
  ) => void;
  /** Told when an event offered through {@link Runtime.offer} could not be applied. */
  onError?: (error: unknown, runId: string) => void;
  /**
   * Called at every effect boundary: after a transition's write, after each effect, after the
   * receipts. Fault-injection tests kill the process here.
   */
  atBoundary?: (boundary: "saved" | "performed" | "receipted") => void;
  /**
   * Awaited before a finished run's outbox is cleared (which takes it off the list recovery
   * reads): the app waits there for the run's surfaces to show its end.
   */
  beforeOutboxCleared?: (runId: string) => Promise<void>;
}

/** Most times a transition is retried after losing a race on the run's version. */
const MAX_CONFLICTS = 20;
/** Tries at completing an outbox whose effects failed retryably, the first after 500 ms, doubling. */
const OUTBOX_RETRIES = 6;
/** Runs whose latest version this process keeps in memory. */
const LATEST_RUNS = 1_000;

/**
 * Drives runs: load → step → one conditional write of state and outbox → perform the effects
 * under `runId/seq` keys → receipts and evidence, written in groups off the transition's path
 * (one durable write per transition waits: the run's). Any number of runtimes may share a
 * store: the version condition lets exactly one of them advance a run per event.
 */
export class Runtime implements EventSink, RunDriver {
  readonly #options: RuntimeOptions;
  readonly #runs: RunRepository;
  /** Each run's events, applied one at a time. */
  readonly #queues = new KeyedQueue();
  /** What follows a transition once its evidence is written: observers, a final outbox's clearing. */
  readonly #following = new TaskSet();
  /**
   * The run versions this process wrote and whose effects it performed to the end: the next
   * event starts from them without a read. A stale one loses its conditional write and is
   * read again. Bounded: a run parked long enough to be forgotten is read again.
   */
  readonly #latest = new LruMap<string, LoadedRun>(LATEST_RUNS);
  readonly #after: AfterEffects;

  constructor(options: RuntimeOptions) {
    this.#options = options;
    this.#runs = new RunRepository(options.store);
    this.#after = new AfterEffects(options.store);
  }

  /** Creates a run and starts it; idempotent under the run's id. */
  async start(definition: RunDefinition, meta: { repo: string }): Promise<Delivery> {
    const now = this.#options.now();
    await this.create(definition, meta, now);
    // A run that exists is started again: a process that died between creating and starting it
    // left it queued; one that started already is refused by the engine.
    return this.deliver(definition.runId, { type: "run.start", at: now });
  }

  /** Creates a run, queued (not started); false when it exists already. */
  async create(
    definition: RunDefinition,
    meta: { repo: string },
    now = this.#options.now(),
  ): Promise<boolean> {
    const document: RunDocument = { definition, state: createSnapshot(definition, now) };
    const run: StoredRun = {
      runId: definition.runId,
      version: 1,
      repo: meta.repo,
      workflow: definition.workflow.name,
      status: document.state.status,
      snapshot: storedDocument(document),
      outbox: [],
      createdAt: now,
      updatedAt: now,
    };
    return createRun(this.#options.store, run, definition.workflow);
  }

  /** Reads a run. */
  load(runId: string): Promise<LoadedRun | undefined> {
    return this.#runs.get(runId);
  }

  /** Offers an event without waiting; a failure goes to `onError`. */
  offer(runId: string, event: RunEvent): void {
    this.deliver(runId, event).catch((error: unknown) => this.#options.onError?.(error, runId));
  }

  /** Offers an event to a run; events of one run are applied one at a time in this process. */
  deliver(runId: string, event: RunEvent): Promise<Delivery> {
    return this.#queues.run(runId, () => this.#deliverNow(runId, event));
  }

  /** Is an event still being applied, or its evidence and receipts still being written? */
  busy(): boolean {
    return this.#queues.busy() || this.#following.busy() || this.#after.busy();
  }

  /** Waits until every event offered so far has been applied and its records written. */
  idle(): Promise<void> {
    return idleAll([this.#queues, this.#after, this.#following]);
  }

  /**
   * Performs the effects a crashed process left in a run's outbox without receipts. Effects
   * are idempotent under their keys, so performing one twice is harmless.
   */
  async reconcile(runId: string): Promise<LoadedRun | undefined> {
    await this.#after.settled(runId);
    const loaded = await this.load(runId);
    if (loaded === undefined) return undefined;
    const { recorded } = await this.#completeOutbox(loaded);
    // Cleared only once the outbox's evidence is written: a crash before leaves it to redo.
    if (isFinal(loaded.document.state.status) && (await recorded)) {
      await this.#clearOutbox(loaded.stored);
    }
    return loaded;
  }

  async #deliverNow(runId: string, event: RunEvent): Promise<Delivery> {
    for (let attempt = 0; attempt < MAX_CONFLICTS; attempt++) {
      let loaded = this.#latest.get(runId);
      this.#latest.delete(runId);
      const cached = loaded !== undefined;
      if (loaded === undefined) {
        // Receipts this process is still writing decide what the outbox still owes.
        await this.#after.settled(runId);
        loaded = await this.#runs.get(runId);
        if (loaded === undefined) {
          const refused: Refusal = { code: "unknown-run", message: `no run ${runId}` };
          return { applied: false, state: undefined, refused };
        }
        await this.#completeOutbox(loaded);
      }
      const { document } = loaded;
      const result = step(document.definition, document.state, event);
      if (result.refused !== undefined && result.effects.length > 0) {
        // A refused rework still records why (`rework.refused`): written, then answered refused.
        const { refused: message, ...recorded } = result;
        const written = await this.#apply(loaded, recorded, event);
        if (written === undefined) continue;
        const refused: Refusal = { code: "not-applicable", message };
        return { applied: false, state: recorded.snapshot, refused };
      }
      if (result.refused !== undefined) {
        // Another replica may have moved the run past the copy this process cached: an event
        // is refused only on the store's current version, never on a stale copy.
        if (cached && (await this.#runs.version(runId)) !== loaded.stored.version) continue;
        this.#latest.set(runId, loaded);
        const refused: Refusal = { code: "not-applicable", message: result.refused };
        return { applied: false, state: document.state, refused };
      }
      const applied = await this.#apply(loaded, result, event);
      if (applied !== undefined) return applied;
    }
    // Retryable: the intake leaves the delivery unprocessed, so its sweep offers the event again.
    throw new RuntimeError(
      "write-conflict",
      `run ${runId}: gave up after ${MAX_CONFLICTS} write conflicts`,
      { retryable: true },
    );
  }

  /**
   * Writes a step's result on the run's version and performs its effects; undefined when another
   * writer got there first. When the store refuses the state for good (over its item size, say),
   * the run ends `failed` with the store's reason instead: a run never stays `running` because
   * its next state cannot be written.
   */
  async #apply(
    loaded: LoadedRun,
    result: StepResult,
    event: RunEvent,
  ): Promise<Delivery | undefined> {
    const { stored, document } = loaded;
    const next: RunDocument = { definition: document.definition, state: result.snapshot };
    const saved: StoredRun = {
      ...stored,
      version: stored.version + 1,
      status: result.snapshot.status,
      snapshot: storedDocument(next),
      // Evidence of earlier transitions still being written stays in the outbox until it is.
      outbox: [...this.#after.carried(stored.runId), ...result.effects],
      updatedAt: this.#options.now(),
    };
    try {
      if (!(await this.#options.store.saveRun(saved))) return undefined;
      this.#after.saved(saved.runId, saved.version);
    } catch (error) {
      if (!isRefusal(error) || event.type === "run.abort") throw error;
      const reason = `the store refused to record the run's next state: ${error.message}`;
      const abort: RunEvent = { type: "run.abort", reason, at: this.#options.now() };
      const aborted = step(document.definition, document.state, abort);
      if (aborted.refused !== undefined) throw error;
      return this.#apply(loaded, aborted, abort);
    }
    if (saved.status !== stored.status) {
      await noteRun(this.#options.store, saved, document.definition.workflow);
    }
    this.#options.atBoundary?.("saved");
    let performed: { recorded: Promise<boolean> };
    try {
      performed = await this.#perform(stored.runId, saved.version, result.effects);
    } catch (error) {
      // The state is written but its effects are not all done, and the run may wait on an
      // answer only they bring (a ledger total, a DevBox): complete them later, here.
      if (isRetryable(error)) this.#completeLater(stored.runId, 0);
      throw error;
    }
    const { recorded } = performed;
    if (!isFinal(result.snapshot.status))
      this.#latest.set(stored.runId, {
        stored: saved,
        document: next,
        outbox: saved.outbox as Effect[],
      });
    // Observers hear of a transition once its evidence is durable, so what they read is there.
    const following = recorded.then(async (written) => {
      this.#options.onTransition?.(next, result.effects, event, this, stored.repo);
      if (!written || !isFinal(result.snapshot.status)) return;
      await this.#options.beforeOutboxCleared?.(stored.runId);
      await this.#clearOutbox(saved);
    });
    void this.#following.add(following);
    return { applied: true, state: result.snapshot };
  }

  /**
   * A finished run stays listed as active while its outbox holds anything (see the store), so
   * that a restart completes the effects of its last transition; once they are done, the outbox
   * is cleared. Losing the race to another writer (a retry) is fine; so is failing: the next
   * recovery clears it.
   */
  async #clearOutbox(stored: StoredRun): Promise<void> {
    if (stored.outbox.length === 0) return;
    const cleared = {
      ...stored,
      version: stored.version + 1,
      outbox: [],
      updatedAt: this.#options.now(),
    };
    await this.#options.store
      .saveRun(cleared)
      .catch((error: unknown) => this.#options.onError?.(error, stored.runId));
  }

  /** Completes the run's outbox after a backoff, again while that fails retryably. */
  #completeLater(runId: string, attempt: number): void {
    const timer = setTimeout(
      () => {
        this.#queues
          .run(runId, () => this.reconcile(runId))
          .catch((error: unknown) => {
            if (isRetryable(error) && attempt + 1 < OUTBOX_RETRIES) {
              this.#completeLater(runId, attempt + 1);
            } else this.#options.onError?.(error, runId);
          });
      },
      500 * 2 ** attempt,
    );
    timer.unref();
  }

  /** Performs what the outbox still owes; `recorded` says whether its evidence got written. */
  async #completeOutbox(loaded: LoadedRun): Promise<{ recorded: Promise<boolean> }> {
    const { stored, outbox } = loaded;
    if (outbox.length === 0) return { recorded: Promise.resolve(true) };
    const receipts = await this.#options.store.getReceipts(
      stored.runId,
      outbox.map((effect) => effect.seq),
    );
    // Evidence carries no receipt: rewriting an entry under its sequence number is harmless.
    const missing = outbox.filter(
      (effect) => effect.type === "evidence" || !receipts.has(effect.seq),
    );
    if (missing.length === 0) return { recorded: Promise.resolve(true) };
    return this.#perform(stored.runId, stored.version, missing);
  }

  /**
   * Performs effects of the run's outbox at `version` in order, then queues their evidence and
   * receipts to be written with other transitions' (see {@link AfterEffects}); `recorded` says
   * whether they were written. A failed write is reported, and the run is read again at its next
   * event so that its outbox is completed.
   */
  async #perform(
    runId: string,
    version: number,
    effects: Effect[],
  ): Promise<{ recorded: Promise<boolean> }> {
    const at = this.#options.now();
    const evidence: Extract<Effect, { type: "evidence" }>[] = [];
    const receipts: Receipt[] = [];
    for (const effect of effects) {
      if (effect.type === "evidence") {
        evidence.push(effect);
      } else {
        const result = await this.#options.performer.perform(runId, effect, this);
        receipts.push({ runId, seq: effect.seq, at, result: result ?? null });
        this.#options.atBoundary?.("performed");
      }
    }
    const recorded = this.#after.record(runId, version, evidence, receipts).then(
      () => {
        this.#options.atBoundary?.("receipted");
        return true;
      },
      (error: unknown) => {
        this.#latest.delete(runId);
        this.#options.onError?.(error, runId);
        return false;
      },
    );
    return { recorded };
  }
}

/** Is the run at a point where a local process may stop (finished or waiting on people)? */
export function isSettled(state: RunSnapshot): boolean {
  return isFinal(state.status) || state.status === "awaiting_input";
}

/** Does the store refuse this write for good (the same write would always be refused)? */
function isRefusal(error: unknown): error is StoreError {
  return (
    error instanceof StoreError &&
    (error.code === "invalid_request" || error.code === "invalid_argument")
  );
}
