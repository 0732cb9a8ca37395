import { callGitHub } from "../errors.js";
import { repoOf } from "../github.js";
import type { HandlerContext, RepositoryPayload } from "../services.js";
import { publishValidation } from "../validation-check.js";
import { isWorkflowPath } from "../workflow-source.js";

/** The fields of a `pull_request` event the app reads. */
export interface PullRequestPayload extends RepositoryPayload {
  action: string;
  number: number;
  pull_request: { head: { sha: string; ref: string } };
}

/** Is it a pull request whose changes the app validates (opened, reopened, synchronized)? */
export function changesPullRequest(payload: PullRequestPayload): boolean {
  return ["opened", "reopened", "synchronize"].includes(payload.action);
}

/** `pull_request` opened, reopened or synchronized: validate the workflow files it changes. */
export async function onPullRequest(
  payload: PullRequestPayload,
  ctx: HandlerContext,
): Promise<void> {
  if (!changesPullRequest(payload)) return;
  const repo = repoOf(payload);
  const files = await callGitHub(`list the files of #${payload.number}`, () =>
    ctx.gh.paginate("GET /repos/{owner}/{repo}/pulls/{pull_number}/files", {
      owner: repo.owner,
      repo: repo.repo,
      pull_number: payload.number,
      per_page: 100,
    }),
  );
  const paths = files
    .filter((file) => file.status !== "removed" && isWorkflowPath(file.filename))
    .map((file) => file.filename);
  if (paths.length > 0) await publishValidation(ctx.gh, repo, payload.pull_request.head.sha, paths);
}
