/**
 * Mints the hub's repository tokens with the app's JWT: the GitHub side of the hub's `mint` port
 * (see RepoTokens), mapping GitHub's answer to a RepoTokenError.
 */

import {
  RepoTokenError,
  type RepoToken,
  type RepoTokenErrorCode,
} from "../../devbox/hub/repo-token.js";
import { toGitHubError } from "./errors.js";

/** The one call of an app-authenticated Octokit (`app.octokit`, JWT auth) this module makes. */
export interface AppOctokit {
  request(
    route: "POST /app/installations/{installation_id}/access_tokens",
    parameters: {
      installation_id: number;
      repositories: string[];
      permissions: { contents: "write" };
    },
  ): Promise<{ data: { token: string; expires_at: string } }>;
}

/** `owner/name` → the name GitHub's `repositories` parameter takes. */
function repositoryName(repo: string): string {
  const match = /^[A-Za-z0-9-]+\/([A-Za-z0-9._-]+)$/.exec(repo);
  if (match?.[1] === undefined) {
    throw new RepoTokenError("invalid_request", `"${repo}" is not a GitHub owner/name`);
  }
  return match[1];
}

/**
 * Mints an installation token for `repo` (`owner/name`) only, with `contents: write` only:
 * `POST /app/installations/{id}/access_tokens` with `repositories: [name]`.
 */
export async function createRepoToken(
  octokitApp: AppOctokit,
  installationId: number,
  repo: string,
): Promise<RepoToken> {
  const name = repositoryName(repo);
  try {
    const { data } = await octokitApp.request(
      "POST /app/installations/{installation_id}/access_tokens",
      {
        installation_id: installationId,
        repositories: [name],
        permissions: { contents: "write" },
      },
    );
    return { token: data.token, expiresAt: data.expires_at };
  } catch (error) {
    throw toRepoTokenError(error, repo);
  }
}

function toRepoTokenError(error: unknown, repo: string): RepoTokenError {
  const github = toGitHubError(`cannot mint a token for ${repo}`, error);
  // A 422 here names a repository the installation does not include.
  const code: RepoTokenErrorCode =
    github.code === "not_found" || github.status === 422
      ? "not_found"
      : github.code === "forbidden"
        ? "access_denied"
        : github.code === "invalid_request"
          ? "invalid_request"
          : "unavailable";
  return new RepoTokenError(code, github.message, { cause: error });
}
