import { fullName, repoOf } from "../client/github.js";
import type { HandlerContext, RepositoryPayload } from "./services.js";
import { publishValidation } from "../surfaces/validation-check.js";
import { isWorkflowPath } from "../../workflow/workflow-paths.js";
import { readWorkflows } from "../client/workflow-source.js";
import { adoptDefaultBranchWorkflows } from "./default-branch.js";

/** The fields of a `push` event the app reads. */
export interface PushPayload extends RepositoryPayload {
  ref: string;
  after: string;
  deleted?: boolean;
  commits: { added?: string[]; modified?: string[]; removed?: string[] }[];
  head_commit?: unknown;
}

/**
 * The files under `.clustercode/` a push to the default branch added or modified (possibly
 * none, when it only removed some); undefined when it touched nothing there.
 */
export function workflowChangesOf(payload: PushPayload): string[] | undefined {
  const { ref, repository, deleted, commits } = payload;
  if (ref !== `refs/heads/${repository.default_branch}` || deleted === true) return undefined;
  const touched = new Set<string>();
  let removed = false;
  for (const commit of commits) {
    for (const path of [...(commit.added ?? []), ...(commit.modified ?? [])]) {
      if (path.startsWith(".clustercode/")) touched.add(path);
    }
    if ((commit.removed ?? []).some((path) => path.startsWith(".clustercode/"))) removed = true;
  }
  return touched.size === 0 && !removed ? undefined : [...touched];
}

/**
 * The push as it is recorded: commits keep only their paths under `.clustercode/`, all that
 * the handler reads, so that a push of thousands of files stays far below the store's 400 KB
 * item limit.
 */
export function trimPush(payload: PushPayload): PushPayload {
  const ours = (paths: string[] | undefined) =>
    (paths ?? []).filter((path) => path.startsWith(".clustercode/"));
  return {
    ...payload,
    head_commit: null,
    commits: payload.commits.map((commit) => ({
      added: ours(commit.added),
      modified: ours(commit.modified),
      removed: ours(commit.removed),
    })),
  };
}

/**
 * `push` to the default branch: its warm DevBoxes are made again at the new head; when it
 * touched `.clustercode/`, validate the workflow files it changed, and take up the new default
 * branch's workflows again (their schedules and the warm DevBoxes they ask for).
 */
export async function onPush(payload: PushPayload, ctx: HandlerContext): Promise<void> {
  const { ref, repository, deleted } = payload;
  if (ref === `refs/heads/${repository.default_branch}` && deleted !== true)
    ctx.services.defaultBranchMoved?.(fullName(repoOf(payload)));
  const touched = workflowChangesOf(payload);
  if (touched === undefined) return;
  const repo = repoOf(payload);
  const paths = touched.filter(isWorkflowPath);
  if (paths.length > 0) await publishValidation(ctx.gh, repo, payload.after, paths);
  await adoptDefaultBranchWorkflows(ctx.services, repo, await readWorkflows(ctx.gh, repo));
}
