import { createOnce, NO_PLUGIN_RETRY } from "../client/create-once.js";
import { callGitHub, isNotFound } from "../client/errors.js";
import type { GitHub, RepoRef } from "../client/github.js";

const MARKER = /<!-- clustercode:[a-z]+:[A-Za-z0-9/._-]+ -->/g;

/**
 * The app's marked comments on an issue: marker → comment id (one listing, paginated). Only
 * comments by the app's own bot login (`<app-slug>[bot]`) count: a person or another app that
 * pastes a marker must not take over a status comment or pass for a notice the app posted.
 */
export async function findMarkedComments(
  gh: GitHub,
  repo: RepoRef,
  issue: number,
  botLogin: string,
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
    if (!isLogin(comment.user?.login, botLogin)) continue;
    for (const marker of comment.body?.match(MARKER) ?? []) {
      if (!found.has(marker)) found.set(marker, Number(comment.id));
    }
  }
  return found;
}

/**
 * Creates the comment holding `marker` once: after a failed attempt (GitHub may have written it
 * and answered 502) the app's marked comments are looked up before the create is sent again.
 */
export async function createMarkedComment(
  gh: GitHub,
  repo: RepoRef,
  issue: number,
  marker: string,
  body: string,
  botLogin: string,
): Promise<number> {
  return createOnce(
    () => createComment(gh, repo, issue, body),
    async () => (await findMarkedComments(gh, repo, issue, botLogin)).get(marker),
  );
}

/** Is `login` the same GitHub login as `expected`? GitHub compares logins ignoring case. */
export function isLogin(login: string | undefined, expected: string): boolean {
  return login !== undefined && login.toLowerCase() === expected.toLowerCase();
}

/** Creates a comment (not re-sent by Octokit's retry); returns its id. */
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
      ...NO_PLUGIN_RETRY,
    }),
  );
  return Number(data.id);
}

/** Edits a comment in place; false when it is gone (a person deleted it). */
export async function updateComment(
  gh: GitHub,
  repo: RepoRef,
  commentId: number,
  body: string,
): Promise<boolean> {
  try {
    await callGitHub(`edit comment ${commentId}`, () =>
      gh.request("PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}", {
        owner: repo.owner,
        repo: repo.repo,
        comment_id: commentId,
        body,
      }),
    );
    return true;
  } catch (error) {
    if (isNotFound(error)) return false;
    throw error;
  }
}
