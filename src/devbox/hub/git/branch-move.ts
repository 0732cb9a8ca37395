import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { DevBoxError } from "../../errors.js";
import { gitText, runGit } from "./git-process.js";
import type { GitUpstream } from "./receive.js";
import { shareObjects } from "./shared-objects.js";

/** A run branch to be pointed at the head a prototype race's winner pushed to its own branch. */
export interface BranchMove {
  /** The run branch, `clustercode/<issue>-<run>`. */
  branch: string;
  /** The winner's variant branch: left as it is, as evidence of the race. */
  from: string;
  /** The winner's head commit; unset: the head of `from`. */
  sha?: string;
}

/**
 * What a move did: `created` the run branch, moved it by `fast-forward`, `reset` it (it had
 * commits the winner does not, pushed during the race), or found it `already` at or past `sha`.
 */
export interface BranchMoved {
  branch: string;
  sha: string;
  how: "created" | "fast-forward" | "reset" | "already";
}

/**
 * Points the upstream's `move.branch` at the winner's head, through the scratch repository
 * `dir` (borrowing the hub's shared objects). Idempotent: a run branch already at the winner's
 * head, or at a commit after it (work pushed since the move), is left alone, so performing the
 * move again after a crash neither moves it twice nor throws later work away. The update is
 * leased on the head read first: a push that lands in between fails the move (retryable).
 */
export async function moveBranch(
  stateDir: string,
  dir: string,
  upstream: GitUpstream,
  move: BranchMove,
): Promise<BranchMoved> {
  await scratch(stateDir, dir, upstream);
  const env = { ...upstream.env, GIT_DIR: dir };
  const heads = await remoteHeads(dir, env, upstream.url, [move.branch, move.from]);
  const sha = move.sha ?? heads.get(move.from);
  if (sha === undefined) {
    throw new DevBoxError(
      "invalid-request",
      `${move.from} has no commit to move ${move.branch} to`,
    );
  }
  const current = heads.get(move.branch);
  if (current === sha) return { branch: move.branch, sha, how: "already" };
  const refs = [move.from, ...(current === undefined ? [] : [move.branch])];
  await gitText(
    [
      "fetch",
      "--quiet",
      "--no-tags",
      "--no-write-fetch-head",
      "--",
      upstream.url,
      ...refs.map((ref) => `+refs/heads/${ref}:refs/heads/${ref}`),
    ],
    { cwd: dir, env },
  );
  if (current !== undefined && (await isAncestor(dir, sha, current))) {
    return { branch: move.branch, sha, how: "already" };
  }
  const how =
    current === undefined
      ? "created"
      : (await isAncestor(dir, current, sha))
        ? "fast-forward"
        : "reset";
  const ref = `refs/heads/${move.branch}`;
  const pushed = await runGit(
    [
      "push",
      "--porcelain",
      "--no-verify",
      `--force-with-lease=${ref}:${current ?? ""}`,
      "--",
      upstream.url,
      `+${sha}:${ref}`,
    ],
    { cwd: dir, env },
  );
  if (pushed.exitCode !== 0) {
    throw new DevBoxError("move-failed", `the repository refused to move ${move.branch}`, {
      retryable: true,
    });
  }
  return { branch: move.branch, sha, how };
}

/** Creates the scratch repository when new; it borrows the objects the hub already fetched. */
async function scratch(stateDir: string, dir: string, upstream: GitUpstream): Promise<void> {
  if (existsSync(join(dir, "HEAD"))) return;
  await mkdir(dir, { recursive: true });
  await gitText(["init", "--bare", "--quiet", dir], { cwd: dir });
  await shareObjects(stateDir, dir, upstream);
}

/** The upstream's heads of `branches` that exist, by branch name. */
async function remoteHeads(
  dir: string,
  env: Record<string, string>,
  url: string,
  branches: readonly string[],
): Promise<Map<string, string>> {
  const listed = await gitText(
    ["ls-remote", "--heads", "--", url, ...branches.map((b) => `refs/heads/${b}`)],
    { cwd: dir, env },
  );
  const heads = new Map<string, string>();
  for (const line of listed.split("\n")) {
    const [sha, ref] = line.split("\t");
    if (sha !== undefined && ref?.startsWith("refs/heads/") === true) {
      heads.set(ref.slice("refs/heads/".length), sha);
    }
  }
  return heads;
}

async function isAncestor(dir: string, ancestor: string, of: string): Promise<boolean> {
  const run = await runGit(["merge-base", "--is-ancestor", ancestor, of], {
    cwd: dir,
    env: { GIT_DIR: dir },
  });
  return run.exitCode === 0;
}
