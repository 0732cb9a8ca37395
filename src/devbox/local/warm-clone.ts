import { readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { OutputTail } from "../output-tail.js";
import { runProcess } from "../process-runner.js";
import { MIRROR_REMOTE } from "./clone.js";
import { refreshMirror, repoMirrorPath } from "./mirror.js";
import type { WarmTemplate } from "../warm-key.js";
import { isAlive } from "./process-info.js";
import { nice } from "./warm-setup.js";

/** Where a repository is cloned from before any run claims it, and git's credentials for it. */
export type WarmSource = (repo: string) => Promise<{ url: string; env: Record<string, string> }>;

/** Runs git with the pool's priority and life; `auth` joins the environment of that one run. */
export type WarmGit = (
  args: string[],
  cwd: string,
  auth: Record<string, string>,
) => Promise<string>;

/** What a warm clone is made with. */
export interface WarmCloneOptions {
  /** Where the host's mirrors live (`<stateDir>/mirrors`), shared with claims. */
  stateDir: string;
  source: WarmSource;
  /** PATH, HOME and LANG for git. */
  env: Record<string, string>;
  git: WarmGit;
}

/**
 * Clones `template`'s default branch into `checkout` (in `dir`) as a claim's partial clone is
 * made: the host's mirror of the repository is fetched first (the source's credentials only in
 * that fetch's environment, never in the mirror), then a blobless clone borrows the mirror's
 * objects (`--reference`), so warm DevBoxes share one copy of the history with each other and
 * with claims. `origin` is a placeholder until a claim points it at its hub. Returns the mirror
 * and the commit the checkout is at.
 */
export async function cloneWarm(
  template: WarmTemplate,
  paths: { dir: string; checkout: string },
  options: WarmCloneOptions,
): Promise<{ mirror: string; sha: string }> {
  const { url, env: auth } = await options.source(template.repo);
  const mirror = repoMirrorPath(options.stateDir, template.repo);
  await refreshMirror(mirror, url, { ...options.env, ...auth });
  const clone = ["clone", "--quiet", "--filter=blob:none", "--reference", mirror];
  const branch = ["--single-branch", "--branch", template.branch, "--origin", MIRROR_REMOTE];
  await options.git([...clone, ...branch, "--", `file://${mirror}`, paths.checkout], paths.dir, {});
  // No address at all until the claim: it fetches and pushes through its own hub route.
  await options.git(["remote", "add", "origin", "warm:unclaimed"], paths.checkout, {});
  const sha = (await options.git(["rev-parse", "HEAD"], paths.checkout, {})).trim();
  return { mirror, sha };
}

/**
 * Git for warm DevBoxes (never through a shell): at a lower priority, killed when `signal`
 * aborts (the pool closes); throws with its exit code when it fails.
 */
export function niceGit(env: Record<string, string>, signal: AbortSignal): WarmGit {
  return async (args, cwd, auth) => {
    const output = new OutputTail(8 * 1024);
    const stdout = new OutputTail(8 * 1024);
    const { exitCode } = await runProcess({
      file: "git",
      args,
      cwd,
      env: { ...env, ...auth, GIT_TERMINAL_PROMPT: "0" },
      signal,
      output,
      stdout,
      wrap: nice,
    });
    if (exitCode !== 0) throw new Error(`git ${args[0]} failed (${exitCode}) for a warm DevBox`);
    return stdout.text();
  };
}

/** Removes the warm DevBoxes (`<root>/w<pid>-…`) a process that is gone left behind. */
export async function removeLeftWarmDirs(root: string): Promise<void> {
  let names: string[];
  try {
    names = await readdir(root);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(/^w(\d+)-/.exec(name)?.[1]);
    if (Number.isInteger(pid) && pid !== process.pid && !(await isAlive(pid)))
      await rm(join(root, name), { recursive: true, force: true });
  }
}
