import type { Effect, RunDefinition, RunSnapshot } from "../engine/model.js";
import type { Store, StoredRun } from "../store/store.js";
import { RuntimeError } from "./runtime-error.js";

/** A run as the runtime works on it: the pinned definition and the state. */
export interface RunDocument {
  definition: RunDefinition;
  state: RunSnapshot;
}

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

/** A run as the runtime reads it: the stored record, its document and its outbox, decoded. */
export interface LoadedRun {
  stored: StoredRun;
  document: RunDocument;
  outbox: Effect[];
}

/**
 * The store's runs, decoded once: the one place that turns a stored record's `unknown`
 * snapshot and outbox into a {@link RunDocument} and effects. A record that is not a run
 * document (a hand-edited or foreign table) is refused with a {@link RuntimeError}.
 */
export class RunRepository {
  constructor(readonly store: Store) {}

  /** Reads and decodes a run; undefined when there is none. */
  /** The run's stored version, without its snapshot. */
  version(runId: string): Promise<number | undefined> {
    return this.store.getRunVersion(runId);
  }

  async get(runId: string): Promise<LoadedRun | undefined> {
    const stored = await this.store.getRun(runId);
    return stored === undefined ? undefined : decodeRun(stored);
  }
}

/**
 * Decodes a stored record, its definition kept as text or (as runs were written before) as an
 * object; throws a {@link RuntimeError} when it holds no run document.
 */
export function decodeRun(stored: StoredRun): LoadedRun {
  const snapshot: unknown = stored.snapshot;
  const definition = isRecord(snapshot) ? definitionOf(snapshot.definition) : undefined;
  if (!isRecord(snapshot) || definition === undefined || !isRecord(snapshot.state))
    throw corrupt(stored, "its snapshot has no definition and state");
  const { state } = snapshot;
  if (definition.runId !== stored.runId || state.runId !== stored.runId)
    throw corrupt(stored, "its snapshot names another run");
  if (!isRecord(definition.workflow) || typeof state.status !== "string")
    throw corrupt(stored, "its snapshot has no workflow or status");
  if (!Array.isArray(stored.outbox) || !stored.outbox.every(isEffect))
    throw corrupt(stored, "its outbox holds something that is not an effect");
  // The shape checked above is what the runtime wrote; the engine's types describe the rest.
  const document = { definition, state } as unknown as RunDocument;
  return { stored, document, outbox: stored.outbox };
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

function corrupt(stored: StoredRun, why: string): RuntimeError {
  return new RuntimeError("corrupt-run", `run ${stored.runId} cannot be read: ${why}`);
}
