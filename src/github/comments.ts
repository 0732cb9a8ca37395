import { callGitHub } from "./errors.js";
import type { GitHub, RepoRef } from "./github.js";

const MARKER = /<!-- clustercode:[a-z]+:[A-Za-z0-9/._-]+ -->/g;

/**
 * The app's marked comments on an issue: marker → comment id (one listing, paginated). Only
 * comments by bots count: a person who pastes a marker must not take over a status comment or
 * pass for a notice the app already posted.
 */
export async function findMarkedComments(
  gh: GitHub,
  repo: RepoRef,
  issue: number,
): Promise<Map<string, number>> {
  const comments = await callGitHub(`list comments of #${issue}`, () =>
    gh.paginate("GET /repos/{owner}/{repo}/issues/{issue_number}/comments", {
      owner: repo.owner,
      repo: repo.repo,
      issue_number: issue,
      per_page: 100,
    }),
  );
  const found = new Map<string, number>();
  for (const comment of comments) {
    if (comment.user?.type !== "Bot") continue;
    for (const marker of comment.body?.match(MARKER) ?? []) {
      if (!found.has(marker)) found.set(marker, Number(comment.id));
    }
  }
  return found;
}

/** Creates a comment; returns its id. */
export async function createComment(
  gh: GitHub,
  repo: RepoRef,
  issue: number,
  body: string,
): Promise<number> {
  const { data } = await callGitHub(`comment on #${issue}`, () =>
    gh.request("POST /repos/{owner}/{repo}/issues/{issue_number}/comments", {
      owner: repo.owner,
      repo: repo.repo,
      issue_number: issue,
      body,
    }),
  );
  return Number(data.id);
}

/** Edits a comment in place. */
export async function updateComment(
  gh: GitHub,
  repo: RepoRef,
  commentId: number,
  body: string,
): Promise<void> {
  await callGitHub(`edit comment ${commentId}`, () =>
    gh.request("PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}", {
      owner: repo.owner,
      repo: repo.repo,
      comment_id: commentId,
      body,
    }),
  );
}
