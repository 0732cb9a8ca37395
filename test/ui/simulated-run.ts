import type { RunDefinition, RunSnapshot } from "../../src/engine/model.js";
import type { LoadedRun } from "../../src/store/run-repository.js";
import type { EvidenceRecord, StoredRun } from "../../src/store/store.js";
import { definitionOf, SimulatedRun, workflowFile, type World } from "../engine/harness.js";

/** A run as the store holds it. */
export function storedRunOf(
  definition: RunDefinition,
  state: RunSnapshot,
  repo = "Codertocat/Hello-World",
): StoredRun {
  return {
    runId: definition.runId,
    version: 1,
    repo,
    workflow: definition.workflow.name,
    status: state.status,
    snapshot: { definition, state },
    outbox: [],
    createdAt: 1_000_000,
    updatedAt: state.updatedAt,
  };
}

/**
 * A simulated run as the store holds it and as it is read, and the evidence its transitions
 * emitted.
 */
export function storedOf(
  sim: SimulatedRun,
  repo?: string,
): { stored: StoredRun; run: LoadedRun; evidence: EvidenceRecord[] } {
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
  const stored = storedRunOf(definition, state, repo);
  return { stored, run: { stored, document: { definition, state }, outbox: [] }, evidence };
}

/**
 * The lifecycle example with its first `test` command failing (the run goes round the loop
 * again), on to where `world` (given the node the token is on) leaves it: by default parked at
 * the deploy approval.
 */
export function lifecycleFailingTestOnce(
  world: (activeNode: () => string | undefined) => World = () => ({}),
  runId = "r1",
): SimulatedRun {
  let tests = 0;
  const sim: SimulatedRun = new SimulatedRun(
    definitionOf(workflowFile("workflows-schema/examples/lifecycle.yml"), { runId }),
    {
      ...world(() => sim.snapshot.active?.node),
      exit: (request) =>
        sim.snapshot.active?.node === "test" && request.command.type === "script" && ++tests === 1
          ? 1
          : 0,
    },
  );
  return sim.start();
}
