import type { Answers } from "../handlers/answers.js";
import type { Installations } from "../client/installations.js";
import type { RunReads } from "../../store/run-repository.js";
import type { Store } from "../../store/store.js";
import { AppRunPages } from "./app-run-pages.js";
import { GitHubSignIn } from "../../ui/github-sign-in.js";
import type { RunPagesConfig } from "../../ui/run-pages-config.js";
import { createRunPagesHandler, type RunPagesHandler } from "../../ui/run-pages-server.js";
import { sessionSecret } from "../../ui/session-secret.js";
import { SignedCookies } from "../../ui/signed-cookies.js";

/** The app's run pages, sign-in and JSON API as one handler for its HTTP server. */
export function appRunPagesHandler(deps: {
  config: RunPagesConfig;
  store: RunReads & Pick<Store, "settingOrPropose" | "putSession" | "getSession" | "deleteSession">;
  installations: Pick<Installations, "client">;
  answers: Pick<Answers, "applyApproval">;
  now: () => number;
  assetDir?: string;
}): RunPagesHandler {
  const signIn = new GitHubSignIn(deps.config, cookiesOnce(deps), deps.store, deps.now);
  const host = new AppRunPages({ ...deps, signIn });
  return createRunPagesHandler(
    host,
    deps.store,
    deps.assetDir === undefined ? {} : { assetDir: deps.assetDir },
  );
}

/**
 * The session cookies' signer, its secret read (or generated) at once and kept; a store that
 * failed is asked again on the next request.
 */
function cookiesOnce(deps: {
  config: RunPagesConfig;
  store: Pick<Store, "settingOrPropose">;
}): () => Promise<SignedCookies> {
  let pending: Promise<SignedCookies> | undefined;
  const get = () => {
    pending ??= sessionSecret(deps.config.sessionSecret, deps.store).then(
      (key) => new SignedCookies(key),
      (error: unknown) => {
        pending = undefined;
        throw error;
      },
    );
    return pending;
  };
  get().catch(() => undefined);
  return get;
}
