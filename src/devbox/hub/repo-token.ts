/**
 * GitHub tokens for the hub's git route: an installation token narrowed to the run's one
 * repository with `contents: write` only, minted by the app and used by the hub alone when it
 * fetches from and pushes to GitHub for a DevBox (DevBoxes never see it).
 */

import { AppError } from "../../errors/app-error.js";
import { toGitHubError } from "../../github/client/errors.js";

/** A token the hub uses with git, and when GitHub expires it (ISO 8601). */
export interface RepoToken {
  token: string;
  expiresAt: string;
}

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

/** Why a token could not be minted. */
export type RepoTokenErrorCode =
  /** The installation is gone, or the repository is not part of it. */
  | "not_found"
  /** The app may not do this (suspended, permission not granted). */
  | "access_denied"
  /** GitHub refused the request as malformed. */
  | "invalid_request"
  /** GitHub failed or throttled; try later. */
  | "unavailable";

/** The one error type of token minting: GitHub's answer as the GitHub adapter maps it. */
export class RepoTokenError extends AppError<RepoTokenErrorCode> {
  override readonly name = "RepoTokenError";

  constructor(code: RepoTokenErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(code, message, { ...options, retryable: code === "unavailable" });
  }
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

/** How {@link RepoTokens} is set up. */
export interface RepoTokensOptions {
  /** Mints a token for a repository, e.g. `(repo) => createRepoToken(app, id, repo)`. */
  mint: (repo: string) => Promise<RepoToken>;
  /** A cached token is handed out only while it has at least this long left; default 15 min. */
  minRemainingMs?: number;
  now?: () => number;
}

/**
 * Tokens per repository, cached until they come within `minRemainingMs` of expiring, so that
 * DevBoxes asking every few minutes cost one GitHub call per repository and half hour.
 */
export class RepoTokens {
  readonly #options: RepoTokensOptions;
  readonly #cache = new Map<string, Promise<RepoToken>>();

  constructor(options: RepoTokensOptions) {
    this.#options = options;
  }

  /** A token for `repo` with at least `minRemainingMs` left. */
  async tokenFor(repo: string): Promise<RepoToken> {
    const now = (this.#options.now ?? Date.now)();
    const margin = this.#options.minRemainingMs ?? 15 * 60_000;
    const cached = this.#cache.get(repo);
    if (cached !== undefined) {
      const token = await cached.catch(() => undefined);
      if (token !== undefined && Date.parse(token.expiresAt) - now > margin) return token;
      if (this.#cache.get(repo) !== cached) return this.tokenFor(repo);
    }
    const minting = this.#options.mint(repo);
    this.#cache.set(repo, minting);
    minting.catch(() => {
      if (this.#cache.get(repo) === minting) this.#cache.delete(repo);
    });
    return minting;
  }
}
