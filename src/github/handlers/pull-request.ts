import { callGitHub } from "../client/errors.js";
import { sendBackIfConflicting } from "./conflicts.js";
import { repoOf } from "../client/github.js";
import { parseRunBranch } from "../../runtime/issue-runs.js";
import type { HandlerContext, RepositoryPayload } from "./services.js";
import { publishValidation } from "../surfaces/validation-check.js";
import { isWorkflowPath } from "../../workflow/workflow-paths.js";
import { publishGraphChangeComment, renderGraphChange } from "../surfaces/graph-change.js";

/** The fields of a `pull_request` event the app reads. */
export interface PullRequestPayload extends RepositoryPayload {
  action: string;
  number: number;
  pull_request: {
    head: { sha: string; ref: string; repo?: { full_name: string } | null };
    base?: { repo: { full_name: string }; sha?: string };
    merged?: boolean | null;
    html_url?: string;
  };
}

/** Is it a pull request whose changes the app validates (opened, reopened, synchronized)? */
export function changesPullRequest(payload: PullRequestPayload): boolean {
  return ["opened", "reopened", "synchronize"].includes(payload.action);
}

/** The run whose own pull request (its branch in the repository, not a fork) was closed. */
export function closedRunOf(payload: PullRequestPayload): string | undefined {
  const { head, base } = payload.pull_request;
  if (payload.action !== "closed" || head.repo?.full_name !== base?.repo.full_name)
    return undefined;
  return parseRunBranch(head.ref)?.runId;
}

/** The run whose own pull request moved or was edited: it may conflict with its base now. */
export function movedRunOf(payload: PullRequestPayload): string | undefined {
  const { head, base } = payload.pull_request;
  if (!["synchronize", "edited"].includes(payload.action)) return undefined;
  if (head.repo?.full_name !== base?.repo.full_name) return undefined;
  return parseRunBranch(head.ref)?.runId;
}

/**
 * `pull_request` opened, reopened or synchronized: validate the workflow files it changes.
 * Closed, when it is a run's: the run records whether it was merged (the judge scorecard reads it).
 */
export async function onPullRequest(
  payload: PullRequestPayload,
  ctx: HandlerContext,
): Promise<void> {
  const closed = closedRunOf(payload);
  if (closed !== undefined) {
    await ctx.services.answers.observe(repoOf(payload), closed, {
      what: "pull_request.closed",
      merged: payload.pull_request.merged === true,
      ...(payload.pull_request.html_url === undefined
        ? {}
        : { where: payload.pull_request.html_url }),
    });
    return;
  }
  const moved = movedRunOf(payload);
  if (moved !== undefined && payload.action === "synchronize") await noteMove(payload, ctx, moved);
  if (moved !== undefined) {
    await sendBackIfConflicting(ctx.services.answers, {
      gh: ctx.gh,
      repo: repoOf(payload),
      runId: moved,
      pull: payload.number,
      sha: payload.pull_request.head.sha,
      holder: ctx.deliveryId,
      ...(payload.pull_request.html_url === undefined
        ? {}
        : { where: payload.pull_request.html_url }),
    });
  }
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
  if (paths.length === 0) return;
  const { head, base } = payload.pull_request;
  const change =
    base?.sha === undefined
      ? undefined
      : await renderGraphChange(ctx.gh, repo, { base: base.sha, head: head.sha }, paths);
  await publishValidation(ctx.gh, repo, head.sha, paths, change);
  const botLogin = await ctx.services.installations.botLogin();
  await publishGraphChangeComment(ctx.gh, repo, payload.number, change, botLogin);
}

/** A push to the run branch the run did not make: no approval of an earlier head counts. */
async function noteMove(payload: PullRequestPayload, ctx: HandlerContext, runId: string) {
  const speaker = {
    gh: ctx.gh,
    repo: repoOf(payload),
    issue: payload.number,
    actor: payload.sender.login,
    where: payload.pull_request.html_url ?? "",
  };
  await ctx.services.answers.branchMovedTo(speaker, runId, payload.pull_request.head.sha);
}
