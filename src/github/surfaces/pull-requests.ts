import type { RunDefinition } from "../../engine/model.js";
import { callGitHub, GitHubAppError } from "../client/errors.js";
import type { GitHub, RepoRef } from "../client/github.js";
import type { Diffstat } from "./render-pull.js";

/** A pull request as the surfaces need it. */
export interface PullRequestRef {
  number: number;
  url: string;
  /** GraphQL node id (taking it out of draft needs it). */
  nodeId?: string;
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
  if (existing !== undefined)
    return { number: existing.number, url: existing.html_url, nodeId: existing.node_id };
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
    return { number: data.number, url: data.html_url, nodeId: data.node_id };
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

/** What the run's commits change against its base (GitHub's compare of base...head). */
export async function diffstatOf(
  gh: GitHub,
  repo: RepoRef,
  base: string,
  head: string,
): Promise<Diffstat> {
  const { data } = await callGitHub(`compare ${base}...${head}`, () =>
    gh.request("GET /repos/{owner}/{repo}/compare/{basehead}", {
      owner: repo.owner,
      repo: repo.repo,
      basehead: `${base}...${head}`,
      per_page: 100,
    }),
  );
  const files = (data.files ?? []).map((file) => ({
    filename: file.filename,
    additions: file.additions,
    deletions: file.deletions,
  }));
  return {
    files,
    additions: files.reduce((sum, file) => sum + file.additions, 0),
    deletions: files.reduce((sum, file) => sum + file.deletions, 0),
    changed: files.length,
  };
}

/** Replaces the pull request's body (what the run changed). */
export async function editPullBody(
  gh: GitHub,
  repo: RepoRef,
  pull: number,
  body: string,
): Promise<void> {
  await callGitHub(`edit the body of #${pull}`, () =>
    gh.request("PATCH /repos/{owner}/{repo}/pulls/{pull_number}", {
      owner: repo.owner,
      repo: repo.repo,
      pull_number: pull,
      body,
    }),
  );
}

/**
 * Takes the pull request out of draft. REST cannot: GitHub's GraphQL mutation
 * `markPullRequestReadyForReview` does, by the pull request's node id.
 */
export async function markReadyForReview(
  gh: GitHub,
  repo: RepoRef,
  pull: PullRequestRef,
): Promise<void> {
  let id = pull.nodeId;
  if (id === undefined) {
    const { data } = await callGitHub(`read pull request #${pull.number}`, () =>
      gh.request("GET /repos/{owner}/{repo}/pulls/{pull_number}", {
        owner: repo.owner,
        repo: repo.repo,
        pull_number: pull.number,
      }),
    );
    if (data.draft !== true || data.state !== "open") return;
    id = data.node_id;
  }
  await callGitHub(`mark #${pull.number} ready for review`, () =>
    gh.graphql(
      "mutation($id: ID!) { markPullRequestReadyForReview(input: { pullRequestId: $id }) { pullRequest { isDraft } } }",
      { id },
    ),
  );
}

/**
 * Whether the pull request merges cleanly with its base: false when GitHub says it conflicts
 * (`mergeable` false, `mergeable_state` dirty); undefined while GitHub is still computing it.
 */
export async function conflictsWithBase(
  gh: GitHub,
  repo: RepoRef,
  pull: number,
): Promise<{ conflicts: boolean; headSha: string } | undefined> {
  const { data } = await callGitHub(`read pull request #${pull}`, () =>
    gh.request("GET /repos/{owner}/{repo}/pulls/{pull_number}", {
      owner: repo.owner,
      repo: repo.repo,
      pull_number: pull,
    }),
  );
  if (data.mergeable === null && data.mergeable_state !== "dirty") return undefined;
  return {
    conflicts: data.mergeable === false || data.mergeable_state === "dirty",
    headSha: data.head.sha,
  };
}
