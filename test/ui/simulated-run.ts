import type { RunDocument } from "../../src/runtime/runtime.js";
import type { EvidenceRecord, StoredRun } from "../../src/store/store.js";
import type { SimulatedRun } from "../engine/harness.js";

/** A simulated run as the store holds it: the run and the evidence its transitions emitted. */
export function storedOf(
  sim: SimulatedRun,
  repo = "Codertocat/Hello-World",
): [StoredRun, EvidenceRecord[]] {
  const { definition, snapshot: state } = sim;
  const evidence = sim.effects.flatMap((effect) =>
    effect.type === "evidence"
      ? [
          {
            runId: definition.runId,
            seq: effect.evidenceSeq,
            at: effect.entry.at,
            entry: effect.entry,
          },
        ]
      : [],
  );
  const document: RunDocument = { definition, state };
  const stored: StoredRun = {
    runId: definition.runId,
    version: 1,
    repo,
    workflow: definition.workflow.name,
    status: state.status,
    snapshot: document,
    outbox: [],
    createdAt: 1_000_000,
    updatedAt: state.updatedAt,
  };
  return [stored, evidence];
}
