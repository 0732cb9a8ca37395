import type { Settings } from "../settings/index.js";

/** What the app's run pages need: where they are, the app's OAuth client, the session secret. */
export interface RunPagesConfig {
  /** CLUSTERCODE_PUBLIC_URL without a trailing slash: the base of every link to a page. */
  publicUrl: string;
  clientId: string;
  clientSecret: string;
  /** CLUSTERCODE_SESSION_SECRET; unset, one is generated and kept in the store. */
  sessionSecret?: string;
  /** GHE_HOST, or github.com. */
  githubHost: string;
}

/** The run pages' configuration, or why the app serves none (and links to none). */
export type RunPagesSetup = { ok: true; config: RunPagesConfig } | { ok: false; why: string };

/**
 * Reads the run pages' configuration: CLUSTERCODE_PUBLIC_URL (absent: no pages, no links),
 * GITHUB_CLIENT_ID and GITHUB_CLIENT_SECRET (the GitHub App's OAuth credentials, for sign-in),
 * and CLUSTERCODE_SESSION_SECRET, the session cookies' key (optional: see session-secret.ts), as
 * decoded at start; `gheHost` is GHE_HOST.
 */
export function runPagesFromSettings(
  pages: Settings["runPages"],
  gheHost: string | undefined,
): RunPagesSetup {
  const publicUrl = pages.publicUrl?.trim().replace(/\/+$/, "") ?? "";
  if (publicUrl === "") return { ok: false, why: "CLUSTERCODE_PUBLIC_URL is not set" };
  if (!/^https?:\/\/[^/\s]+(\/[^\s]*)?$/.test(publicUrl))
    return { ok: false, why: `CLUSTERCODE_PUBLIC_URL is not an http(s) URL: ${publicUrl}` };
  const clientId = pages.githubClientId ?? "";
  const clientSecret = pages.githubClientSecret ?? "";
  if (clientId === "" || clientSecret === "")
    return { ok: false, why: "GITHUB_CLIENT_ID and GITHUB_CLIENT_SECRET are needed for sign-in" };
  const secret = pages.sessionSecret ?? "";
  return {
    ok: true,
    config: {
      publicUrl,
      clientId,
      clientSecret,
      ...(secret === "" ? {} : { sessionSecret: secret }),
      githubHost: gheHost ?? "github.com",
    },
  };
}

/** The app's run page of `runId` in `repo` (owner/name), under the public URL. */
export function runPageUrl(publicUrl: string, repo: string, runId: string): string {
  return `${publicUrl}/runs/${repo.split("/").map(encodeURIComponent).join("/")}/${encodeURIComponent(runId)}`;
}
