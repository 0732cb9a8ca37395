import { warmSpecsOf } from "../../devbox/warm-demand.js";
import { fullName, type RepoRef } from "../client/github.js";
import type { WorkflowFile } from "../client/workflow-source.js";
import type { AppServices } from "./services.js";

/**
 * Takes up the workflows just read from `repo`'s default branch (on start, on install, on a
 * push touching `.clustercode/`): the warm DevBoxes they ask for are declared, so that pools
 * fill before the first claim, and their schedules are registered. A file that does not parse
 * asks for nothing, as it schedules nothing.
 */
export async function adoptDefaultBranchWorkflows(
  services: Pick<AppServices, "schedules" | "warmDemand">,
  repo: RepoRef,
  files: WorkflowFile[],
): Promise<void> {
  const workflows = files.flatMap((file) => (file.parsed.ok ? [file.parsed.workflow] : []));
  const name = fullName(repo);
  services.warmDemand?.declare(name, warmSpecsOf(name, repo.defaultBranch, workflows));
  await services.schedules.register(repo, files);
}
