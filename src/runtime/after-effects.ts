import type { Effect } from "../engine/model.js";
import type { EvidenceRecord, Receipt, Store } from "../store/store.js";
import { Batcher } from "./concurrency/batcher.js";

type EvidenceEffect = Extract<Effect, { type: "evidence" }>;

/** A group is written once it holds this many records (one full BatchWriteItem)... */
const GROUP_RECORDS = 25;
/** ...or this long after its first record: a run's transitions in a row share writes. */
const GROUP_WINDOW_MS = 10;

/** Records queued together. */
interface Queued {
  runId: string;
  /** The run version whose outbox the receipts are for. */
  version: number;
  evidence: EvidenceRecord[];
  receipts: Receipt[];
}

/**
 * Writes evidence and receipts off the transitions' path, in groups: what arrives while one
 * write is in flight goes out together in the next (one BatchWriteItem per 25 records, of any
 * runs). A transition then waits only for its own conditional write of the run. Until a run's
 * evidence is durable, {@link carried} hands it back to be kept in the run's next outbox, so a
 * crash loses none of it (recovery rewrites the outbox's evidence). A receipt only spares a
 * recovering process from performing its run's latest outbox again: one whose run has been
 * saved at a later version by the time its group is written is moot, and left out (in a run
 * that moves on quickly, most are).
 */
export class AfterEffects {
  readonly #batcher: Batcher<Queued, void>;
  /** Per run: its evidence not yet durable, by evidence seq, and its writes in flight. */
  readonly #runs = new Map<
    string,
    {
      evidence: Map<number, EvidenceEffect>;
      writes: number;
      done: Promise<void>;
      /** The latest version of the run saved since its writes were queued. */
      saved: number;
    }
  >();

  constructor(private readonly store: Store) {
    this.#batcher = new Batcher({
      full: GROUP_RECORDS,
      windowMs: GROUP_WINDOW_MS,
      weight: (queued) => queued.evidence.length + queued.receipts.length,
      write: (group) => this.#write(group),
    });
  }

  /**
   * Queues the records of the effects of run `runId`'s outbox at `version`; resolves once they
   * are durable (or moot), rejects when the store refused them.
   */
  record(
    runId: string,
    version: number,
    evidence: EvidenceEffect[],
    receipts: Receipt[],
  ): Promise<void> {
    if (evidence.length === 0 && receipts.length === 0) return Promise.resolve();
    const run = this.#runs.get(runId) ?? {
      evidence: new Map(),
      writes: 0,
      done: Promise.resolve(),
      saved: version,
    };
    this.#runs.set(runId, run);
    for (const effect of evidence) run.evidence.set(effect.evidenceSeq, effect);
    run.writes++;
    const records = evidence.map((effect) => ({
      runId,
      seq: effect.evidenceSeq,
      at: effect.entry.at,
      entry: effect.entry,
    }));
    const written = this.#batcher.add({ runId, version, evidence: records, receipts });
    const settle = (ok: boolean) => {
      if (ok) for (const effect of evidence) run.evidence.delete(effect.evidenceSeq);
      if (--run.writes === 0 && run.evidence.size === 0) this.#runs.delete(runId);
    };
    run.done = written.then(
      () => settle(true),
      () => settle(false),
    );
    return written;
  }

  /** Run `runId` was saved at `version`: receipts queued for its earlier outboxes are moot. */
  saved(runId: string, version: number): void {
    const run = this.#runs.get(runId);
    if (run !== undefined) run.saved = Math.max(run.saved, version);
  }

  /** Evidence of run `runId` not yet durable: the run's next outbox keeps it. */
  carried(runId: string): EvidenceEffect[] {
    return [...(this.#runs.get(runId)?.evidence.values() ?? [])];
  }

  /** Waits until the writes of run `runId` queued so far are done (written or refused). */
  async settled(runId: string): Promise<void> {
    await this.#runs.get(runId)?.done;
  }

  /** Are writes queued or in flight? */
  busy(): boolean {
    return this.#batcher.busy();
  }

  /** Writes what is queued now, and waits until everything queued so far is written (or refused). */
  idle(): Promise<void> {
    return this.#batcher.idle();
  }

  async #write(group: Queued[]): Promise<void[]> {
    const owed = (queued: Queued) => (this.#runs.get(queued.runId)?.saved ?? 0) <= queued.version;
    await this.store.writeAfterEffects(
      group.flatMap((queued) => queued.evidence),
      group.flatMap((queued) => (owed(queued) ? queued.receipts : [])),
    );
    return group.map(() => undefined);
  }
}
