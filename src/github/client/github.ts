import type { ProbotOctokit } from "probot";

/** An Octokit authenticated as an installation or as the app (Probot's, with its plugins). */
export type GitHub = ProbotOctokit;

/** A repository as webhook payloads name it. */
export interface RepoRef {
  owner: string;
  repo: string;
  /** The default branch, read from the payload: workflows are read from it. */
  defaultBranch: string;
}

/** `owner/name`: how the store names a repository. */
export function fullName(ref: Pick<RepoRef, "owner" | "repo">): string {
  return `${ref.owner}/${ref.repo}`;
}

/** Reads a repository reference out of any webhook payload that has `repository`. */
export function repoOf(payload: {
  repository: { name: string; owner: { login: string }; default_branch: string };
}): RepoRef {
  return {
    owner: payload.repository.owner.login,
    repo: payload.repository.name,
    defaultBranch: payload.repository.default_branch,
  };
}

/** Splits `owner/name` back. */
export function splitFullName(name: string): { owner: string; repo: string } {
  const [owner = "", repo = ""] = name.split("/");
  return { owner, repo };
}

/** How the app gets Octokit clients: per installation, or as the app itself (JWT). */
export interface GitHubAuth {
  installation(installationId: number): Promise<GitHub>;
  app(): Promise<GitHub>;
}
