import { DevBoxError } from "./errors.js";

/**
 * Where repositories are cloned from: the GitHub the app talks to. As Probot does for the API,
 * `GHE_HOST` names a GitHub Enterprise Server (host, optionally `:port`) and `GHE_PROTOCOL`
 * (`https` by default, or `http` for an on-premises or loopback server) how to reach it.
 */
export function gitHostBaseUrl(env: NodeJS.ProcessEnv): URL {
  const host = env.GHE_HOST?.trim() || "github.com";
  const protocol = env.GHE_PROTOCOL?.trim().toLowerCase() || "https";
  if (protocol !== "http" && protocol !== "https") {
    throw new DevBoxError(
      "invalid-request",
      `GHE_PROTOCOL must be http or https, got "${env.GHE_PROTOCOL}"`,
    );
  }
  if (!URL.canParse(`${protocol}://${host}/`) || /[/@?#]/.test(host)) {
    throw new DevBoxError(
      "invalid-request",
      `GHE_HOST must be a host name with an optional :port, got "${host}"`,
    );
  }
  return new URL(`${protocol}://${host}/`);
}

/**
 * The clone URL of `repo` (owner/name) on `base`, with `token` as the installation token's
 * basic credentials when given (git sends them over whichever protocol `base` uses).
 */
export function repositoryCloneUrl(base: URL, repo: string, token?: string): string {
  const url = new URL(`${repo}.git`, base);
  if (token !== undefined) {
    url.username = "x-access-token";
    url.password = token;
  }
  return url.toString();
}
