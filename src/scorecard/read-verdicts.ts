import type { LoadedRun, RunRepository } from "../store/run-repository.js";
import { verdictsOf, type Verdict } from "./scorecard.js";

/**
 * The judges' verdicts in `runs`, each with its fate, read from their evidence. Only runs whose
 * workflow has a judge (an agent decision or a judged prototype) are read.
 */
export async function readVerdicts(
  runs: readonly LoadedRun[],
  repository: Pick<RunRepository, "evidence">,
): Promise<Verdict[]> {
  const verdicts: Verdict[] = [];
  for (const run of runs) {
    const { definition } = run.document;
    if (!Object.values(definition.workflow.nodes).some((node) => "judge" in node)) continue;
    const evidence = await repository.evidence(run.stored.runId);
    verdicts.push(
      ...verdictsOf(
        definition,
        evidence.map((e) => e.entry),
      ),
    );
  }
  return verdicts;
}
