/**
 * GitHub tokens for the hub's git route: an installation token narrowed to the run's one
 * repository with `contents: write` only, minted by the app (the `mint` port; the GitHub side is
 * `createRepoToken` in src/github/client/mint-repo-token.ts) and used by the hub alone when it
 * fetches from and pushes to GitHub for a DevBox (DevBoxes never see it).
 */

import { AppError } from "../../errors/app-error.js";

/** A token the hub uses with git, and when GitHub expires it (ISO 8601). */
export interface RepoToken {
  token: string;
  expiresAt: string;
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
