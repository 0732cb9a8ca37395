import type { FeedbackItem } from "../../engine/feedback.js";
import { callGitHub } from "../client/errors.js";
import type { GitHub, RepoRef } from "../client/github.js";
import { truncateText } from "../client/limits.js";

/** A feedback item before it is stamped with when it was delivered. */
export type UntimedFeedback = Omit<FeedbackItem, "at">;

/** How much of a review (its body and all its line comments) a node is told, in bytes. */
const MAX_REVIEW_BYTES = 16_000;

/** How many line comments of one review are read. */
const MAX_LINE_COMMENTS = 100;

/** The review a feedback item is made of: who, where, which commit, and what it said. */
interface ReviewRef {
  pull_request: { number: number };
  review: {
    id: number;
    body?: string | null;
    html_url: string;
    commit_id: string;
    user: { login: string } | null;
  };
}

/**
 * A review requesting changes as feedback: its body, then each line comment as `path:line` and
 * its text (read through the pulls review-comments API for that review). Untrusted text, bounded.
 */
export async function reviewFeedback(
  gh: GitHub,
  repo: RepoRef,
  { pull_request, review }: ReviewRef,
): Promise<UntimedFeedback[]> {
  const { data: comments } = await callGitHub(`read the comments of review ${review.id}`, () =>
    gh.request("GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews/{review_id}/comments", {
      owner: repo.owner,
      repo: repo.repo,
      pull_number: pull_request.number,
      review_id: review.id,
      per_page: MAX_LINE_COMMENTS,
    }),
  );
  const lines = comments.map((comment) => {
    const line = comment.line ?? comment.original_line ?? undefined;
    return `${comment.path}${line === undefined ? "" : `:${line}`}: ${comment.body}`;
  });
  const body = review.body ?? "";
  const detail = [body, ...lines].filter((part) => part !== "").join("\n\n");
  const actor = review.user?.login;
  return [
    {
      source: "review",
      label: "changes_requested",
      summary: `${actor === undefined ? "A reviewer" : `@${actor}`} requested changes${lines.length === 0 ? "" : ` (${lines.length} line comment${lines.length === 1 ? "" : "s"})`}`,
      ...(detail === "" ? {} : { detail: truncateText(detail, MAX_REVIEW_BYTES) }),
      ...(actor === undefined ? {} : { actor: `@${actor}` }),
      url: review.html_url,
      headSha: review.commit_id,
    },
  ];
}
