import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { inheritedEnvironment } from "../settings/process-environment.js";

const exec = promisify(execFile);

/** Who the snapshot commit names when the repository has no identity configured. */
const FALLBACK_IDENTITY = {
  GIT_AUTHOR_NAME: "clustercode",
  GIT_AUTHOR_EMAIL: "clustercode@localhost",
  GIT_COMMITTER_NAME: "clustercode",
  GIT_COMMITTER_EMAIL: "clustercode@localhost",
};

/**
 * The paths with uncommitted changes in `repo`'s working tree: modified, staged, deleted and
 * untracked files (ignored ones are not changes).
 */
export async function uncommittedPaths(repo: string): Promise<string[]> {
  const { stdout } = await exec("git", ["-C", repo, "status", "--porcelain=v1", "-z"], {
    maxBuffer: 16 * 1024 * 1024,
  });
  const paths: string[] = [];
  const fields = stdout.split("\0");
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i] ?? "";
    if (field.length < 4) continue;
    paths.push(field.slice(3));
    // A rename or copy is followed by its source path.
    if (field[0] === "R" || field[0] === "C") i++;
  }
  return paths;
}

/**
 * Commits the working tree as it is (HEAD plus every uncommitted change, untracked files
 * included) to `branch` of `repo` without touching the user's index, branch or files, so a
 * DevBox's clone starts from the same files the user sees. Returns the commit.
 */
export async function commitWorkingTree(
  repo: string,
  branch: string,
  message: string,
): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "clustercode-index-"));
  try {
    const env = { ...inheritedEnvironment(), GIT_INDEX_FILE: join(dir, "index") };
    const git = async (...args: string[]) =>
      (
        await exec("git", ["-C", repo, ...args], { env, maxBuffer: 16 * 1024 * 1024 })
      ).stdout.trim();
    await git("read-tree", "HEAD");
    await git("add", "-A");
    const tree = await git("write-tree");
    const identity = await git("var", "GIT_COMMITTER_IDENT").then(
      () => ({}),
      () => FALLBACK_IDENTITY,
    );
    Object.assign(env, identity);
    const commit = await git("commit-tree", tree, "-p", "HEAD", "-m", message);
    await git("update-ref", `refs/heads/${branch}`, commit, "");
    return commit;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
