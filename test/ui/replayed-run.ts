import { readFileSync } from "node:fs";
import type { CommandResult } from "../../src/engine/commands.js";
import type { EvidenceEntry, RunEvent, RunSnapshot } from "../../src/engine/model.js";
import { createSnapshot, step } from "../../src/engine/step.js";
import type { RunDocument } from "../../src/runtime/runtime.js";
import type { LoadedRun } from "../../src/store/run-repository.js";
import type { EvidenceRecord, StoredRun } from "../../src/store/store.js";
import { definitionOf, workflowFile } from "../engine/harness.js";

/** A stored run and its evidence, as the store would hold them, and the run as it is read. */
export interface ReplayedRun {
  stored: StoredRun;
  run: LoadedRun;
  evidence: EvidenceRecord[];
}

/**
 * Replays a golden event log (test/fixtures) of the lifecycle example until `until` holds (or
 * to its end), collecting the evidence entries the transitions emitted, so that pages can be
 * tested on real engine output.
 */
export function replayGolden(
  name: "lifecycle-approved" | "lifecycle-rework-and-reject",
  options: {
    until?: (state: RunSnapshot) => boolean;
    /** Changes what each command reported (its output tail, tokens). */
    result?: (result: CommandResult) => CommandResult;
  } = {},
): ReplayedRun {
  const golden = JSON.parse(
    readFileSync(new URL(`../fixtures/${name}.json`, import.meta.url), "utf8"),
  ) as { workflow: string; events: RunEvent[] };
  const definition = definitionOf(workflowFile(golden.workflow), {
    runId: "r1",
    brief: "Add a greeting <img src=x onerror=alert(1)>\nmore text",
  });
  let state = createSnapshot(definition, 1_000_000);
  const evidence: EvidenceRecord[] = [];
  for (const original of golden.events) {
    const event =
      original.type === "command.finished" && options.result !== undefined
        ? { ...original, result: options.result(original.result) }
        : original;
    const result = step(definition, state, event);
    state = result.snapshot;
    for (const effect of result.effects) {
      if (effect.type !== "evidence") continue;
      const entry: EvidenceEntry = effect.entry;
      evidence.push({ runId: "r1", seq: effect.evidenceSeq, at: entry.at, entry });
    }
    if (options.until?.(state) === true) break;
  }
  const document: RunDocument = { definition, state };
  const stored: StoredRun = {
    runId: definition.runId,
    version: 1,
    repo: "Codertocat/Hello-World",
    workflow: definition.workflow.name,
    status: state.status,
    snapshot: document,
    outbox: [],
    createdAt: 1_000_000,
    updatedAt: state.updatedAt,
  };
  return { stored, run: { stored, document, outbox: [] }, evidence };
}

/** Stops a replay when the run waits for its approval. */
export const atApproval = (state: RunSnapshot) => state.awaiting?.kind === "approval";
