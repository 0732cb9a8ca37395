import type { GitPolicy } from "../devbox/hub/git/push-policy.js";
import type { Store } from "../store/store.js";
import { DevBoxError } from "../devbox/errors.js";
import { RunRepository } from "../store/run-repository.js";

/**
 * What a run's DevBoxes may push, from its pinned definition: its run branch (and variants)
 * only, and `.github/workflows/` only when the workflow sets `devbox.git.allow_workflow_changes`.
 */
export function gitPolicyOf(store: Store): (runId: string) => Promise<GitPolicy> {
  const runs = new RunRepository(store);
  return async (runId) => {
    const run = await runs.get(runId);
    if (run === undefined)
      throw new DevBoxError("invalid-request", `run ${runId} is not in the store`);
    const { definition } = run.document;
    return {
      runBranch: definition.branch,
      baseBranch: definition.baseBranch,
      allowWorkflowChanges: definition.workflow.devbox?.git?.allow_workflow_changes === true,
    };
  };
}
