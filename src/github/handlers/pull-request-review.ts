import { repoOf } from "../github.js";
import { parseRunBranch } from "../run-index.js";
import type { HandlerContext, RepositoryPayload } from "../services.js";

/** The fields of a `pull_request_review` event the app reads. */
export interface PullRequestReviewPayload extends RepositoryPayload {
  action: string;
  pull_request: {
    number: number;
    head: { ref: string; repo: { full_name: string } | null };
    base: { repo: { full_name: string } };
  };
  review: { state: string; body?: string | null; html_url: string; user: { login: string } | null };
}

/** The run and reviewer of a person's approving review of a run's PR; else undefined. */
export function approvalOf(
  payload: PullRequestReviewPayload,
): { runId: string; reviewer: string } | undefined {
  const { action, review, sender, pull_request } = payload;
  if (action !== "submitted" || review.state.toLowerCase() !== "approved") return undefined;
  if (sender.type !== "User" || review.user === null) return undefined;
  // Only the run's own pull request: its head branch lives in the repository, not in a fork.
  const { head, base } = pull_request;
  if (head.repo?.full_name !== base.repo.full_name) return undefined;
  const run = parseRunBranch(head.ref);
  return run === undefined ? undefined : { runId: run.runId, reviewer: review.user.login };
}

/** `pull_request_review.submitted` approving a run's PR answers its waiting approval. */
export async function onPullRequestReview(
  payload: PullRequestReviewPayload,
  ctx: HandlerContext,
): Promise<void> {
  const approval = approvalOf(payload);
  if (approval === undefined) return;
  const note = payload.review.body ?? "";
  await ctx.services.answers.answerApproval(
    {
      gh: ctx.gh,
      repo: repoOf(payload),
      issue: payload.pull_request.number,
      actor: approval.reviewer,
      where: payload.review.html_url,
    },
    approval.runId,
    "approved",
    note === "" ? undefined : note,
  );
}
