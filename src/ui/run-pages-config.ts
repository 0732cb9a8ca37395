import { createHmac } from "node:crypto";

/** What the app's run pages need: where they are, the app's OAuth client, the session key. */
export interface RunPagesConfig {
  /** CLUSTERCODE_PUBLIC_URL without a trailing slash: the base of every link to a page. */
  publicUrl: string;
  clientId: string;
  clientSecret: string;
  /** The key signing session cookies. */
  sessionKey: Buffer;
  /** GHE_HOST, or github.com. */
  githubHost: string;
}

/** The run pages' configuration, or why the app serves none (and links to none). */
export type RunPagesSetup = { ok: true; config: RunPagesConfig } | { ok: false; why: string };

/**
 * Reads the run pages' configuration: CLUSTERCODE_PUBLIC_URL (absent: no pages, no links),
 * GITHUB_CLIENT_ID and GITHUB_CLIENT_SECRET (the GitHub App's OAuth credentials, for sign-in),
 * and CLUSTERCODE_SESSION_SECRET, else a key derived from WEBHOOK_SECRET (HMAC-SHA256 of a
 * fixed label), for the session cookies.
 */
export function runPagesFromEnv(env: NodeJS.ProcessEnv): RunPagesSetup {
  const publicUrl = env.CLUSTERCODE_PUBLIC_URL?.trim().replace(/\/+$/, "") ?? "";
  if (publicUrl === "") return { ok: false, why: "CLUSTERCODE_PUBLIC_URL is not set" };
  if (!/^https?:\/\/[^/\s]+(\/[^\s]*)?$/.test(publicUrl))
    return { ok: false, why: `CLUSTERCODE_PUBLIC_URL is not an http(s) URL: ${publicUrl}` };
  const clientId = env.GITHUB_CLIENT_ID ?? "";
  const clientSecret = env.GITHUB_CLIENT_SECRET ?? "";
  if (clientId === "" || clientSecret === "")
    return { ok: false, why: "GITHUB_CLIENT_ID and GITHUB_CLIENT_SECRET are needed for sign-in" };
  const secret = env.CLUSTERCODE_SESSION_SECRET ?? "";
  const webhook = env.WEBHOOK_SECRET ?? "";
  if (secret === "" && webhook === "")
    return {
      ok: false,
      why: "CLUSTERCODE_SESSION_SECRET (or WEBHOOK_SECRET) is needed to sign sessions",
    };
  const sessionKey =
    secret !== ""
      ? Buffer.from(secret, "utf8")
      : createHmac("sha256", webhook).update("clustercode run page sessions").digest();
  return {
    ok: true,
    config: {
      publicUrl,
      clientId,
      clientSecret,
      sessionKey,
      githubHost: env.GHE_HOST ?? "github.com",
    },
  };
}

/** The app's run page of `runId` in `repo` (owner/name), under the public URL. */
export function runPageUrl(publicUrl: string, repo: string, runId: string): string {
  return `${publicUrl}/runs/${repo.split("/").map(encodeURIComponent).join("/")}/${encodeURIComponent(runId)}`;
}
