import { repoOf } from "../github.js";
import { parseRunBranch } from "../run-index.js";
import type { HandlerContext, RepositoryPayload } from "../services.js";

/** The fields of a `pull_request_review` event the app reads. */
export interface PullRequestReviewPayload extends RepositoryPayload {
  action: string;
  pull_request: { number: number; head: { ref: string } };
  review: { state: string; body?: string | null; html_url: string; user: { login: string } | null };
}

/** `pull_request_review.submitted` approving a run's PR answers its waiting approval. */
export async function onPullRequestReview(
  payload: PullRequestReviewPayload,
  ctx: HandlerContext,
): Promise<void> {
  if (payload.action !== "submitted" || payload.review.state.toLowerCase() !== "approved") return;
  if (payload.sender.type !== "User" || payload.review.user === null) return;
  const run = parseRunBranch(payload.pull_request.head.ref);
  if (run === undefined) return;
  const note = payload.review.body ?? "";
  await ctx.services.answers.answerApproval(
    {
      gh: ctx.gh,
      repo: repoOf(payload),
      issue: payload.pull_request.number,
      actor: payload.review.user.login,
      where: payload.review.html_url,
    },
    run.runId,
    "approved",
    note === "" ? undefined : note,
  );
}
