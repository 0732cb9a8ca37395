import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { promisify } from "node:util";
import { WarmDemand, warmSpecsOf } from "../devbox/warm-demand.js";
import { discoverWorkflows, findGitRoot } from "../workflow/find-workflows.js";
import { parseWorkflow } from "../workflow/parse.js";
import type { Workflow } from "../workflow/workflow.schema.js";

const git = promisify(execFile);

/**
 * Declares the warm DevBoxes the workflows of the repository `dir` is in ask for, at the head of
 * its checked-out branch (the base a local run starts from), so that the first DevBox a long-lived
 * local process (`clustercode ui`) claims for it is ready. Returns the repository it declared for;
 * undefined, declaring nothing, outside a repository with a checked-out branch.
 */
export async function declareLocalWarm(
  demand: WarmDemand,
  dir: string,
): Promise<string | undefined> {
  const repo = await findGitRoot(dir);
  if (repo === undefined) return undefined;
  const branch = await git("git", ["-C", repo, "rev-parse", "--abbrev-ref", "HEAD"]).then(
    ({ stdout }) => stdout.trim(),
    () => "",
  );
  // A detached HEAD or a repository without commits is no base a run could start from.
  if (branch === "" || branch === "HEAD") return undefined;
  const workflows: Workflow[] = [];
  for (const path of await discoverWorkflows(repo)) {
    const parsed = parseWorkflow(await readFile(resolve(repo, path), "utf8"));
    if (parsed.ok) workflows.push(parsed.workflow);
  }
  demand.declare(repo, warmSpecsOf(repo, branch, workflows));
  return repo;
}

/** A {@link WarmDemand} holding what the repository `dir` is in asks for (see declareLocalWarm). */
export async function localWarmDemand(dir: string): Promise<WarmDemand> {
  const demand = new WarmDemand();
  await declareLocalWarm(demand, dir);
  return demand;
}
