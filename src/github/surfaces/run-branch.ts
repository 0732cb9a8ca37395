import { callGitHub, GitHubAppError } from "../client/errors.js";
import type { GitHub, RepoRef } from "../client/github.js";

/**
 * Points the run branch (the pull request's head) at `sha`: after a prototype race the winner's
 * commit, and every commit after it, land on the run's own branch, so the pull request shows
 * what the run ships. Forced, since a race's winner need not descend from the branch's last
 * commit; only ever the run's own branch (`clustercode/<issue>-<run>`). Created when missing.
 */
export async function moveRunBranch(
  gh: GitHub,
  repo: RepoRef,
  branch: string,
  sha: string,
): Promise<void> {
  try {
    await callGitHub(`move ${branch} to ${sha}`, () =>
      gh.request("PATCH /repos/{owner}/{repo}/git/refs/{ref}", {
        owner: repo.owner,
        repo: repo.repo,
        ref: `heads/${branch}`,
        sha,
        force: true,
      }),
    );
  } catch (error) {
    // GitHub answers 422 "Reference does not exist" for a branch no checkpoint pushed yet.
    if (!(error instanceof GitHubAppError) || (error.status !== 422 && error.status !== 404))
      throw error;
    await callGitHub(`create ${branch} at ${sha}`, () =>
      gh.request("POST /repos/{owner}/{repo}/git/refs", {
        owner: repo.owner,
        repo: repo.repo,
        ref: `refs/heads/${branch}`,
        sha,
      }),
    );
  }
}
