import type { RunDefinition } from "../engine/model.js";
import { callGitHub, GitHubAppError } from "./errors.js";
import type { GitHub, RepoRef } from "./github.js";

/** A pull request as the surfaces need it. */
export interface PullRequestRef {
  number: number;
  url: string;
}

/**
 * The run's draft pull request: found by its head branch, else created (once the branch has
 * commits). Undefined while GitHub refuses to open it (no commits between the branches yet).
 */
export async function ensurePullRequest(
  gh: GitHub,
  repo: RepoRef,
  branch: string,
  definition: RunDefinition,
  issue: number,
): Promise<PullRequestRef | undefined> {
  const { data: open } = await callGitHub(`find the pull request of ${branch}`, () =>
    gh.request("GET /repos/{owner}/{repo}/pulls", {
      owner: repo.owner,
      repo: repo.repo,
      head: `${repo.owner}:${branch}`,
      state: "all",
    }),
  );
  const existing = open[0];
  if (existing !== undefined) return { number: existing.number, url: existing.html_url };
  try {
    const { data } = await callGitHub(`open the pull request of ${branch}`, () =>
      gh.request("POST /repos/{owner}/{repo}/pulls", {
        owner: repo.owner,
        repo: repo.repo,
        title: `ClusterCode: ${definition.workflow.name} for #${issue}`,
        head: branch,
        base: definition.baseBranch,
        body: `Run \`${definition.runId}\` of workflow \`${definition.workflow.name}\` for #${issue}. Answer approvals with a review or \`/approve\`.`,
        draft: true,
      }),
    );
    return { number: data.number, url: data.html_url };
  } catch (error) {
    if (error instanceof GitHubAppError && error.status === 422) return undefined;
    throw error;
  }
}

/** Asks the approvers (users and teams of the repository's organisation) to review. */
export async function requestReviews(
  gh: GitHub,
  repo: RepoRef,
  pull: number,
  approvers: readonly string[],
): Promise<void> {
  const reviewers: string[] = [];
  const teams: string[] = [];
  for (const approver of approvers) {
    const [first, team] = approver.replace(/^@/, "").split("/");
    if (team === undefined && first !== undefined) reviewers.push(first);
    else if (team !== undefined && first?.toLowerCase() === repo.owner.toLowerCase())
      teams.push(team);
  }
  if (reviewers.length === 0 && teams.length === 0) return;
  await callGitHub(`request reviews on #${pull}`, () =>
    gh.request("POST /repos/{owner}/{repo}/pulls/{pull_number}/requested_reviewers", {
      owner: repo.owner,
      repo: repo.repo,
      pull_number: pull,
      reviewers,
      team_reviewers: teams,
    }),
  );
}
