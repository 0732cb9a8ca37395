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

/** `pull_request_review.submitted` approving a run's PR answers its waiting approval. */
export async function onPullRequestReview(
  payload: PullRequestReviewPayload,
  ctx: HandlerContext,
): Promise<void> {
  if (payload.action !== "submitted" || payload.review.state.toLowerCase() !== "approved") return;
  if (payload.sender.type !== "User" || payload.review.user === null) return;
  // Only the run's own pull request: its head branch lives in the repository, not in a fork.
  const { head, base } = payload.pull_request;
  if (head.repo?.full_name !== base.repo.full_name) return;
  const run = parseRunBranch(head.ref);
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
