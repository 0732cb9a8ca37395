import { tokenCredentials } from "./git.js";

/** The runtime's repository token as the internal API hands it out; undefined when it has none. */
export type RepoTokenFetch = () => Promise<{ token: string; expiresAt: string } | undefined>;

/**
 * Git credentials from the runtime's repository token, fetched when first needed and again
 * within five minutes of its expiry; none when the runtime hands out no token (a local
 * repository). The token never lands in the checkout's configuration.
 */
export function repositoryCredentials(
  fetchToken: RepoTokenFetch,
): () => Promise<Record<string, string>> {
  let cached: { env: Record<string, string>; refreshAt: number } | undefined;
  return async () => {
    if (cached !== undefined && Date.now() < cached.refreshAt) return cached.env;
    // Unreachable now: git goes on with what it had, and fails visibly if that is not enough.
    const token = await fetchToken().catch(() => null);
    if (token === null) return cached?.env ?? {};
    const env = token === undefined ? {} : tokenCredentials(token.token);
    const expires = token === undefined ? Infinity : Date.parse(token.expiresAt);
    cached = { env, refreshAt: Number.isNaN(expires) ? 0 : expires - 5 * 60_000 };
    return env;
  };
}
