import { rm } from "node:fs/promises";
import { relative } from "node:path";
import { DevBoxError } from "../errors.js";
import type { StartRequest } from "../executor.js";
import { hubGitAuthEnv } from "../hub/git/git-auth.js";
import { OutputTail } from "../output-tail.js";
import { runProcess } from "../process-runner.js";
import { viaHub } from "./agent-env.js";
import { git, MIRROR_FRESH_MS, mirrorOf, refreshMirror } from "./mirror.js";
import { isPlainFileInside } from "./no-follow.js";
import { withoutCredentials } from "./repository-url.js";

/** The remote a partial checkout fetches missing blobs from: the host's mirror, no network. */
export const MIRROR_REMOTE = "mirror";

/** Where a clone is made and what it may say in the DevBox's log. */
export interface ClonePaths {
  dir: string;
  checkout: string;
  /** Where mirrors live (`<stateDir>`); without it the clone is a plain one. */
  stateDir?: string;
  /**
   * How long after a fetch of the mirror a clone takes it as it is (default
   * {@link MIRROR_FRESH_MS}; 0: fetch it for every clone).
   */
  mirrorFreshMs?: number;
  /** Writes one line to the DevBox's log. */
  say?: (line: string) => void;
}

/**
 * Clones the request's repository into `checkout` (a fresh directory in `dir`), with `env`
 * (PATH, HOME, LANG) and, through the hub, the DevBox's own hub token (never stored in the
 * clone). With a `stateDir`, the clone is a blobless single-branch clone of the run branch (or
 * the base branch before the run branch exists) from the host's mirror, fetched first; when the
 * mirror fails, a plain clone, said in the log. A failure is a retryable `clone-failed`.
 */
export async function cloneCheckout(
  request: StartRequest,
  paths: ClonePaths,
  env: Record<string, string>,
): Promise<void> {
  if (paths.stateDir !== undefined) {
    try {
      await partialClone(request, { ...paths, stateDir: paths.stateDir }, env);
      return;
    } catch (error) {
      const why = (error as Error).message.replaceAll(
        request.repository,
        withoutCredentials(request.repository),
      );
      paths.say?.(`clustercode: the mirror clone failed, cloning in full instead: ${why.trim()}`);
    }
  }
  await plainClone(request, paths, env);
}

async function plainClone(
  request: StartRequest,
  paths: ClonePaths,
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

/**
 * Refreshes the mirror, clones the branch the agent will check out from it, blobless and with
 * the mirror as its reference (alternates), so the checkout holds only its own new objects;
 * then adds `origin` for the real repository: fetches and pushes go where they always went.
 * The mirror never drops objects (no gc, no repack), so checkouts that borrow them stay whole.
 */
async function partialClone(
  request: StartRequest,
  paths: ClonePaths & { stateDir: string },
  env: Record<string, string>,
): Promise<void> {
  const mirror = mirrorOf(paths.stateDir, request);
  const auth = viaHub(request) ? hubGitAuthEnv(request.token) : {};
  // A mirror fetched moments ago (claims in a row, prototype variants) is not fetched again: a
  // round trip through the hub, which makes a staging repository for the DevBox first. That is
  // only a saving, never trusted for correctness: a mirror that lacks the commit the DevBox must
  // start on (a checkpoint pushed since) is fetched whatever its age, and the agent resets its
  // run branch to that commit, fetching it from origin when the clone still lacks it.
  const freshMs = paths.mirrorFreshMs ?? MIRROR_FRESH_MS;
  await refreshMirror(mirror, request.repository, { ...env, ...auth }, freshMs);
  const sha = request.spec.sha;
  if (sha !== undefined && !(await hasCommit(mirror, sha, env))) {
    await refreshMirror(mirror, request.repository, { ...env, ...auth }, 0);
  }
  const branch = await firstBranch(mirror, [request.spec.branch, request.spec.baseBranch], env);
  await rm(paths.checkout, { recursive: true, force: true });
  try {
    await git(
      [
        "clone",
        "--quiet",
        "--filter=blob:none",
        // Borrows the mirror's objects instead of copying them: nothing of the history is
        // transferred, and a blob the mirror lacks is fetched from it when first needed.
        "--reference",
        mirror,
        "--single-branch",
        ...(branch === undefined ? [] : ["--branch", branch]),
        "--origin",
        MIRROR_REMOTE,
        "--",
        `file://${mirror}`,
        paths.checkout,
      ],
      paths.dir,
      { ...env, GIT_TERMINAL_PROMPT: "0" },
    );
    await git(
      ["remote", "add", "origin", withoutCredentials(request.repository)],
      paths.checkout,
      env,
    );
    // The run branch is the agent's own, pushed to origin; it follows no one.
    if (branch !== undefined)
      await git(["branch", "--unset-upstream", branch], paths.checkout, env);
  } catch (error) {
    await rm(paths.checkout, { recursive: true, force: true });
    throw error;
  }
}

/** Whether the mirror has the commit `sha` (a full commit id; anything else: no). */
async function hasCommit(
  mirror: string,
  sha: string,
  env: Record<string, string>,
): Promise<boolean> {
  if (!/^[0-9a-f]{40,64}$/.test(sha)) return false;
  return git(["cat-file", "-e", `${sha}^{commit}`], mirror, env).then(
    () => true,
    () => false,
  );
}

/** The first of `branches` the mirror has, or undefined (then the mirror's HEAD). */
async function firstBranch(
  mirror: string,
  branches: string[],
  env: Record<string, string>,
): Promise<string | undefined> {
  for (const branch of branches) {
    if (branch === "" || branch.startsWith("-")) continue;
    const found = await git(
      ["rev-parse", "--verify", "--quiet", `refs/heads/${branch}`],
      mirror,
      env,
    ).then(
      () => true,
      () => false,
    );
    if (found) return branch;
  }
  return undefined;
}

/** Points the checkout's `origin` at `repository` (without credentials); false if git failed. */
export async function setOrigin(
  paths: { checkout: string },
  repository: string,
  env: Record<string, string>,
): Promise<boolean> {
  const { exitCode } = await runProcess({
    file: "git",
    // Only the config file is read and written: git is never run in a checkout the DevBox had,
    // whose config (a hook, an fsmonitor, an include) is the repository's code. The caller made
    // sure the file is no link; the cwd is none of the DevBox's either.
    args: [
      "config",
      "--file",
      `${paths.checkout}/.git/config`,
      "remote.origin.url",
      withoutCredentials(repository),
    ],
    cwd: "/",
    env,
    signal: new AbortController().signal,
    output: new OutputTail(1024),
  });
  return exitCode === 0;
}

/** How a DevBox's checkout is prepared: the executor's clone options. */
export interface CheckoutOptions {
  /** Where mirrors live; unset: plain full clones (the benchmark's baseline). */
  stateDir?: string;
  mirrorFreshMs?: number;
  say: (line: string) => void;
}

/**
 * Clones the checkout (partially, from the host's mirror, when `stateDir` is given) unless an
 * earlier process left one, whose origin then names that process's hub, gone now, and is
 * pointed at this one. Shared by the local and the container executors.
 */
export async function prepareCheckout(
  request: StartRequest,
  paths: { dir: string; checkout: string },
  options: CheckoutOptions,
  env: Record<string, string>,
): Promise<void> {
  // A checkout whose `.git` or config is a link (or under one) is not reused: the host would
  // write its origin through it. It is cloned afresh.
  const config = `${relative(paths.dir, paths.checkout)}/.git/config`;
  if (!(await isPlainFileInside(paths.dir, config))) {
    await cloneCheckout(request, { ...paths, ...options }, env);
  } else if (!(await setOrigin(paths, request.repository, env))) {
    throw new DevBoxError(
      "clone-failed",
      `cannot point the checkout of ${request.devboxId} at its hub`,
      { retryable: true },
    );
  }
}
