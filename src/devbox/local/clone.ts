import { rm } from "node:fs/promises";
import { DevBoxError } from "../errors.js";
import type { StartRequest } from "../executor.js";
import { hubGitAuthEnv } from "../hub/git/git-auth.js";
import { OutputTail } from "../output-tail.js";
import { runProcess } from "../process-runner.js";
import { viaHub } from "./agent-env.js";
import { withoutCredentials } from "./repository-url.js";

/**
 * Clones the request's repository into `checkout` (a fresh directory in `dir`), with `env`
 * (PATH, HOME, LANG) and, through the hub, the DevBox's own hub token (never stored in the
 * clone). A failure is a retryable `clone-failed` DevBoxError.
 */
export async function cloneCheckout(
  request: StartRequest,
  paths: { dir: string; checkout: string },
  env: Record<string, string>,
): Promise<void> {
  const { repository } = request;
  await rm(paths.checkout, { recursive: true, force: true });
  const auth = viaHub(request) ? hubGitAuthEnv(request.token) : {};
  const output = new OutputTail(8 * 1024);
  const { exitCode } = await runProcess({
    file: "git",
    args: ["clone", "--quiet", "--", repository, paths.checkout],
    cwd: paths.dir,
    env: { ...env, ...auth, GIT_TERMINAL_PROMPT: "0" },
    signal: new AbortController().signal,
    output,
  });
  if (exitCode !== 0) {
    throw new DevBoxError(
      "clone-failed",
      `git clone ${repository} failed (${exitCode}): ${output.text()}`,
      { retryable: true },
    );
  }
  // A token in the clone URL must not stay in the checkout, where every command could read it
  // and where it would expire: the agent authenticates each fetch and push afresh instead.
  if (withoutCredentials(repository) !== repository) await setOrigin(paths, repository, env);
}

/** Points the checkout's `origin` at `repository` (without credentials); false if git failed. */
export async function setOrigin(
  paths: { checkout: string },
  repository: string,
  env: Record<string, string>,
): Promise<boolean> {
  const { exitCode } = await runProcess({
    file: "git",
    // The checkout may belong to the DevBox's own uid.
    args: [
      "-c",
      `safe.directory=${paths.checkout}`,
      "remote",
      "set-url",
      "origin",
      withoutCredentials(repository),
    ],
    cwd: paths.checkout,
    env,
    signal: new AbortController().signal,
    output: new OutputTail(1024),
  });
  return exitCode === 0;
}
