import type { EvidenceEntry } from "../engine/model.js";
import { decodeRun } from "../runtime/run-repository.js";
import type { Store, StoredRun } from "../store/store.js";
import { verdictsOf, type Verdict } from "./scorecard.js";

/**
 * The judges' verdicts in `runs`, each with its fate, read from their evidence. Only runs whose
 * workflow has a judge (an agent decision or a judged prototype) are read.
 */
export async function readVerdicts(
  runs: readonly StoredRun[],
  store: Pick<Store, "listEvidence">,
): Promise<Verdict[]> {
  const verdicts: Verdict[] = [];
  for (const run of runs) {
    const { definition } = decodeRun(run).document;
    if (!Object.values(definition.workflow.nodes).some((node) => "judge" in node)) continue;
    const evidence = await store.listEvidence(run.runId);
    verdicts.push(
      ...verdictsOf(
        definition,
        evidence.map((e) => e.entry as EvidenceEntry),
      ),
    );
  }
  return verdicts;
}
