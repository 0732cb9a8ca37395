import type {
  Effect,
  EvidenceEntry,
  RunDefinition,
  RunDocument,
  RunSnapshot,
} from "../engine/model.js";
import type { EvidenceRecord, Store, StoredRun } from "./store.js";
import { StoreError } from "./store-error.js";

export type { RunDocument };

/**
 * What the runtime keeps in the store's snapshot field: the definition as JSON text, which the
 * store keeps beside the run item once it is over a kilobyte (a blob, written with the run's
 * first version and addressed by content), so that each transition writes only the state.
 */
export interface StoredDocument {
  definition: string;
  state: RunSnapshot;
}

/** The definitions' JSON text, made once per definition: every transition of a run shares it. */
const definitionTexts = new WeakMap<RunDefinition, string>();

/** A run document as the store keeps it (see {@link StoredDocument}). */
export function storedDocument(document: RunDocument): StoredDocument {
  const { definition, state } = document;
  let text = definitionTexts.get(definition);
  if (text === undefined) {
    text = JSON.stringify(definition);
    definitionTexts.set(definition, text);
  }
  return { definition: text, state };
}

/** A run as it is read: the stored record, its document and its outbox, decoded. */
export interface LoadedRun {
  stored: StoredRun;
  document: RunDocument;
  outbox: Effect[];
}

/** The store's reads of runs and evidence, all a {@link RunRepository} needs. */
export type RunReads = Pick<
  Store,
  | "getRun"
  | "getRunVersion"
  | "listRuns"
  | "listActiveRuns"
  | "listActiveRunHeads"
  | "listRunsOfIssue"
  | "listEvidence"
>;

/** One evidence entry of a run, as the engine wrote it. */
export interface RunEvidence extends Omit<EvidenceRecord, "entry"> {
  entry: EvidenceEntry;
}

/**
 * The store's runs, decoded once: the one run API outside `src/store/`, and the one place that
 * turns a stored record's `unknown` snapshot, outbox and evidence into a {@link RunDocument},
 * effects and evidence entries. A record that is not a run document (a hand-edited or foreign
 * table) is refused with a {@link StoreError} (`corrupt_record`).
 */
export class RunRepository {
  constructor(readonly store: RunReads) {}

  /** The run's stored version, without its snapshot. */
  version(runId: string): Promise<number | undefined> {
    return this.store.getRunVersion(runId);
  }

  /**
   * The repository a run works on (owner/name, or a local path), read without decoding its
   * snapshot: what DevBoxes clone and ledgers are keyed by; undefined when there is no such run.
   */
  async repoOf(runId: string): Promise<string | undefined> {
    return (await this.store.getRun(runId))?.repo;
  }

  /** Reads and decodes a run; undefined when there is none. */
  async get(runId: string): Promise<LoadedRun | undefined> {
    const stored = await this.store.getRun(runId);
    return stored === undefined ? undefined : decodeRun(stored);
  }

  /** Runs of a repository, newest first (at most `limit`, default 100). */
  async list(repo: string, options?: { limit?: number }): Promise<LoadedRun[]> {
    return (await this.store.listRuns(repo, options)).map(decodeRun);
  }

  /** Runs whose status is not final, of one repository or all. */
  async listActive(options?: { repo?: string; limit?: number }): Promise<LoadedRun[]> {
    return (await this.store.listActiveRuns(options)).map(decodeRun);
  }

  /** The runs of one issue of a repository. */
  async ofIssue(repo: string, issue: number): Promise<LoadedRun[]> {
    return (await this.store.listRunsOfIssue(repo, issue)).map(decodeRun);
  }

  /** A run's evidence, in order. */
  async evidence(runId: string): Promise<RunEvidence[]> {
    return (await this.store.listEvidence(runId)).map(decodeEvidence);
  }
}

/**
 * Decodes a stored record, its definition kept as text or (as runs were written before) as an
 * object; throws a {@link StoreError} when it holds no run document.
 */
function decodeRun(stored: StoredRun): LoadedRun {
  const snapshot: unknown = stored.snapshot;
  const definition = isRecord(snapshot) ? definitionOf(snapshot.definition) : undefined;
  if (!isRecord(snapshot) || definition === undefined || !isRecord(snapshot.state))
    throw corrupt(stored.runId, "its snapshot has no definition and state");
  const { state } = snapshot;
  if (definition.runId !== stored.runId || state.runId !== stored.runId)
    throw corrupt(stored.runId, "its snapshot names another run");
  if (!isRecord(definition.workflow) || typeof state.status !== "string")
    throw corrupt(stored.runId, "its snapshot has no workflow or status");
  if (!Array.isArray(stored.outbox) || !stored.outbox.every(isEffect))
    throw corrupt(stored.runId, "its outbox holds something that is not an effect");
  // The shape checked above is what the runtime wrote; the engine's types describe the rest.
  const document = { definition, state } as unknown as RunDocument;
  return { stored, document, outbox: stored.outbox };
}

function decodeEvidence(record: EvidenceRecord): RunEvidence {
  const { entry } = record;
  if (!isRecord(entry) || typeof entry.kind !== "string" || typeof entry.at !== "number")
    throw corrupt(record.runId, `its evidence ${record.seq} is not an evidence entry`);
  return { ...record, entry: entry as EvidenceEntry };
}

function definitionOf(value: unknown): Record<string, unknown> | undefined {
  if (typeof value !== "string") return isRecord(value) ? value : undefined;
  try {
    const parsed: unknown = JSON.parse(value);
    return isRecord(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

function isEffect(value: unknown): value is Effect {
  return isRecord(value) && typeof value.type === "string" && typeof value.seq === "number";
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function corrupt(runId: string, why: string): StoreError {
  return new StoreError("corrupt_record", `run ${runId} cannot be read: ${why}`);
}
