import type { Effect, RunDefinition, RunEvent, RunSnapshot } from "../engine/model.js";
import { isFinal } from "../engine/model.js";
import { createSnapshot, step } from "../engine/step.js";
import type { EvidenceRecord, Receipt, Store, StoredRun } from "../store/store.js";
import type { EffectPerformer } from "./effects.js";
import { RuntimeError } from "./runtime-error.js";

/** What the runtime keeps in the store's snapshot field: the pinned definition and the state. */
export interface RunDocument {
  definition: RunDefinition;
  state: RunSnapshot;
}

/** A run as the runtime reads it. */
export interface LoadedRun {
  stored: StoredRun;
  document: RunDocument;
}

/**
 * Why an event was not applied: `unknown-run` when the run does not exist, `not-applicable`
 * when the engine refused it (the engine says why in words, which is `message`).
 */
export interface Refusal {
  code: "unknown-run" | "not-applicable";
  message: string;
}

/** What happened when an event was offered to a run. */
export type Delivery =
  | { applied: true; state: RunSnapshot }
  | { applied: false; state: RunSnapshot | undefined; refused: Refusal };

/** Dependencies of the runtime, passed explicitly. */
export interface RuntimeOptions {
  store: Store;
  performer: EffectPerformer;
  now: () => number;
  /** Told after every applied transition (progress output, GitHub surfaces). */
  onTransition?: (run: RunDocument, effects: Effect[], event: RunEvent) => void;
  /**
   * Called at every effect boundary: after a transition's write, after each effect, after the
   * receipts. Fault-injection tests kill the process here.
   */
  atBoundary?: (boundary: "saved" | "performed" | "receipted") => void;
}

/** Most times a transition is retried after losing a race on the run's version. */
const MAX_CONFLICTS = 20;

/**
 * Drives runs: load → step → one conditional write of state and outbox → perform the effects
 * under `runId/seq` keys → one batch of receipts and evidence. Any number of runtimes may share
 * a store: the version condition lets exactly one of them advance a run per event.
 */
export class Runtime {
  readonly #options: RuntimeOptions;
  readonly #queues = new Map<string, Promise<unknown>>();
  /**
   * The run versions this process wrote and whose effects it performed to the end: the next
   * event starts from them without a read. A stale one loses its conditional write and is
   * read again.
   */
  readonly #latest = new Map<string, StoredRun>();

  constructor(options: RuntimeOptions) {
    this.#options = options;
  }

  /** Creates a run and starts it; idempotent under the run's id. */
  async start(definition: RunDefinition, meta: { repo: string }): Promise<Delivery> {
    const now = this.#options.now();
    const document: RunDocument = { definition, state: createSnapshot(definition, now) };
    const created = await this.#options.store.createRun({
      runId: definition.runId,
      version: 1,
      repo: meta.repo,
      workflow: definition.workflow.name,
      status: document.state.status,
      snapshot: document,
      outbox: [],
      createdAt: now,
      updatedAt: now,
    });
    // A run that exists is started again: a process that died between creating and starting it
    // left it queued; one that started already is refused by the engine.
    if (!created) return this.deliver(definition.runId, { type: "run.start", at: now });
    return this.deliver(definition.runId, { type: "run.start", at: now });
  }

  /** Reads a run. */
  async load(runId: string): Promise<LoadedRun | undefined> {
    const stored = await this.#options.store.getRun(runId);
    return stored === undefined ? undefined : { stored, document: stored.snapshot as RunDocument };
  }

  /** Offers an event to a run; events of one run are applied one at a time in this process. */
  deliver(runId: string, event: RunEvent): Promise<Delivery> {
    const previous = this.#queues.get(runId) ?? Promise.resolve();
    const next = previous.then(
      () => this.#deliverNow(runId, event),
      () => this.#deliverNow(runId, event),
    );
    this.#queues.set(runId, next);
    const forget = () => {
      if (this.#queues.get(runId) === next) this.#queues.delete(runId);
    };
    next.then(forget, forget);
    return next;
  }

  /** Waits until every event offered so far has been applied. */
  async idle(): Promise<void> {
    while (this.#queues.size > 0) await Promise.allSettled([...this.#queues.values()]);
  }

  /**
   * Performs the effects a crashed process left in a run's outbox without receipts. Effects
   * are idempotent under their keys, so performing one twice is harmless.
   */
  async reconcile(runId: string): Promise<LoadedRun | undefined> {
    const loaded = await this.load(runId);
    if (loaded === undefined) return undefined;
    await this.#completeOutbox(loaded.stored);
    return loaded;
  }

  async #deliverNow(runId: string, event: RunEvent): Promise<Delivery> {
    const { store } = this.#options;
    for (let attempt = 0; attempt < MAX_CONFLICTS; attempt++) {
      let stored = this.#latest.get(runId);
      this.#latest.delete(runId);
      if (stored === undefined) {
        stored = await store.getRun(runId);
        if (stored === undefined) {
          const refused: Refusal = { code: "unknown-run", message: `no run ${runId}` };
          return { applied: false, state: undefined, refused };
        }
        await this.#completeOutbox(stored);
      }
      const document = stored.snapshot as RunDocument;
      const result = step(document.definition, document.state, event);
      if (result.refused !== undefined) {
        this.#latest.set(runId, stored);
        const refused: Refusal = { code: "not-applicable", message: result.refused };
        return { applied: false, state: document.state, refused };
      }
      const next: RunDocument = { definition: document.definition, state: result.snapshot };
      const saved: StoredRun = {
        ...stored,
        version: stored.version + 1,
        status: result.snapshot.status,
        snapshot: next,
        outbox: result.effects,
        updatedAt: this.#options.now(),
      };
      if (!(await store.saveRun(saved))) continue;
      this.#options.atBoundary?.("saved");
      await this.#perform(runId, result.effects);
      if (!isFinal(saved.status as RunSnapshot["status"])) this.#latest.set(runId, saved);
      this.#options.onTransition?.(next, result.effects, event);
      return { applied: true, state: result.snapshot };
    }
    // Retryable: the intake leaves the delivery unprocessed, so its sweep offers the event again.
    throw new RuntimeError(
      "write-conflict",
      `run ${runId}: gave up after ${MAX_CONFLICTS} write conflicts`,
      { retryable: true },
    );
  }

  async #completeOutbox(stored: StoredRun): Promise<void> {
    const outbox = stored.outbox as Effect[];
    if (outbox.length === 0) return;
    const receipts = await this.#options.store.getReceipts(
      stored.runId,
      outbox.map((effect) => effect.seq),
    );
    // Evidence carries no receipt: rewriting an entry under its sequence number is harmless.
    const missing = outbox.filter(
      (effect) => effect.type === "evidence" || !receipts.has(effect.seq),
    );
    if (missing.length > 0) await this.#perform(stored.runId, missing);
  }

  async #perform(runId: string, effects: Effect[]): Promise<void> {
    const at = this.#options.now();
    const evidence: EvidenceRecord[] = [];
    const receipts: Receipt[] = [];
    for (const effect of effects) {
      if (effect.type === "evidence") {
        evidence.push({ runId, seq: effect.evidenceSeq, at: effect.entry.at, entry: effect.entry });
      } else {
        const result = await this.#options.performer.perform(runId, effect);
        receipts.push({ runId, seq: effect.seq, at, result: result ?? null });
        this.#options.atBoundary?.("performed");
      }
    }
    await this.#options.store.writeAfterEffects(evidence, receipts);
    this.#options.atBoundary?.("receipted");
  }
}

/** Is the run at a point where a local process may stop (finished or waiting on people)? */
export function isSettled(state: RunSnapshot): boolean {
  return isFinal(state.status) || state.status === "awaiting_input";
}
