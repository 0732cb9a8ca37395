import { repoOf } from "../client/github.js";
import { reviewFeedback, type UntimedFeedback } from "./review-feedback.js";
import { parseRunBranch } from "../../runtime/issue-runs.js";
import type { HandlerContext, RepositoryPayload } from "./services.js";

/** The fields of a `pull_request_review` event the app reads. */
export interface PullRequestReviewPayload extends RepositoryPayload {
  action: string;
  pull_request: {
    number: number;
    head: { ref: string; repo: { full_name: string } | null };
    base: { repo: { full_name: string } };
  };
  review: {
    id: number;
    state: string;
    body?: string | null;
    html_url: string;
    commit_id: string;
    user: { login: string } | null;
  };
}

/** A person's review of a run's PR that answers or reworks it. */
export interface RunReview {
  runId: string;
  reviewer: string;
  verdict: "approved" | "changes_requested";
}

/**
 * The run, reviewer and verdict of a person's review approving, or requesting changes to, a
 * run's PR; else undefined (comments only, bots, forks, other branches).
 */
export function reviewOf(payload: PullRequestReviewPayload): RunReview | undefined {
  const { action, review, sender, pull_request } = payload;
  const verdict = review.state.toLowerCase();
  if (action !== "submitted" || (verdict !== "approved" && verdict !== "changes_requested"))
    return undefined;
  if (sender.type !== "User" || review.user === null) return undefined;
  // Only the run's own pull request: its head branch lives in the repository, not in a fork.
  const { head, base } = pull_request;
  if (head.repo?.full_name !== base.repo.full_name) return undefined;
  const run = parseRunBranch(head.ref);
  return run === undefined ? undefined : { runId: run.runId, reviewer: review.user.login, verdict };
}

/**
 * `pull_request_review.submitted` on a run's PR. Approving answers the waiting approval, when
 * the review saw the run branch's current head (an older review is refused with a reply).
 * Requesting changes rejects the waiting approval with the review and its line comments as
 * feedback, or sends a run that succeeded back to work.
 */
export async function onPullRequestReview(
  payload: PullRequestReviewPayload,
  ctx: HandlerContext,
): Promise<void> {
  const review = reviewOf(payload);
  if (review === undefined) return;
  const repo = repoOf(payload);
  const note = payload.review.body ?? "";
  const speaker = {
    gh: ctx.gh,
    repo,
    issue: payload.pull_request.number,
    actor: review.reviewer,
    where: payload.review.html_url,
  };
  if (review.verdict === "approved") {
    await ctx.services.answers.answerApproval(
      speaker,
      review.runId,
      "approved",
      note === "" ? undefined : note,
      undefined,
      { headSha: payload.review.commit_id },
    );
    return;
  }
  const feedback: UntimedFeedback[] = await reviewFeedback(ctx.gh, repo, payload);
  await ctx.services.answers.requestChanges(speaker, review.runId, {
    note,
    feedback,
    headSha: payload.review.commit_id,
  });
}
