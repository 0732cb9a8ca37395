import { callGitHub, isNotFound } from "./errors.js";
import type { GitHub, RepoRef } from "./github.js";

/**
 * The commit `branch` points at on GitHub now, or null when GitHub has no such branch. What an
 * approval is checked against: a push to the branch after the run's checkpoint is work nobody
 * reviewed, whatever the review saw. A failure to ask is thrown (the delivery is retried).
 */
export async function branchHead(
  gh: GitHub,
  repo: RepoRef,
  branch: string,
): Promise<string | null> {
  try {
    const { data } = await callGitHub(`read the head of ${branch}`, () =>
      gh.request("GET /repos/{owner}/{repo}/git/ref/{ref}", {
        owner: repo.owner,
        repo: repo.repo,
        ref: `heads/${branch}`,
      }),
    );
    return data.object.sha;
  } catch (error) {
    if (isNotFound(error)) return null;
    throw error;
  }
}
