import { execFile } from "node:child_process";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inheritedEnvironment } from "../settings/process-environment.js";

/** Default bound of a diff handed to a judge. */
export const DIFF_LIMIT_BYTES = 60 * 1024;

/** What a judge compares: `head` against the merge base of `base` and `head`. */
export interface DiffRequest {
  /** The source repository: a local path or a URL git can fetch from. */
  repository: string;
  base: string;
  head: string;
  /** Bound of the returned text; longer diffs are cut and say so. */
  maxBytes?: number;
}

/** Where a judge's diffs come from (a local git repository; GitHub's compare API later). */
export interface DiffSource {
  /** The diff `base...head`, bounded; rejects when either ref cannot be read. */
  diff(request: DiffRequest): Promise<string>;
}

/**
 * Diffs with the git CLI, without a shell: `git diff base...head` in the repository when it is a
 * local directory, else in a temporary bare repository that fetches just the two branches.
 */
export class GitDiffSource implements DiffSource {
  constructor(private readonly git = "git") {}

  async diff(request: DiffRequest): Promise<string> {
    const limit = request.maxBytes ?? DIFF_LIMIT_BYTES;
    if (await isDirectory(request.repository)) {
      return bound(await this.#diffIn(request.repository, request.base, request.head), limit);
    }
    const dir = await mkdtemp(join(tmpdir(), "clustercode-diff-"));
    try {
      await run(this.git, ["init", "--bare", "--quiet", dir]);
      await run(this.git, [
        "-C",
        dir,
        "fetch",
        "--quiet",
        "--no-tags",
        "--",
        request.repository,
        `+refs/heads/${request.base}:refs/heads/${request.base}`,
        `+refs/heads/${request.head}:refs/heads/${request.head}`,
      ]);
      return bound(await this.#diffIn(dir, request.base, request.head), limit);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  #diffIn(dir: string, base: string, head: string): Promise<string> {
    // `--end-of-options` keeps a branch name that starts with "-" from being read as an option.
    return run(this.git, [
      "-C",
      dir,
      "diff",
      "--no-color",
      "--no-ext-diff",
      "--end-of-options",
      `refs/heads/${base}...refs/heads/${head}`,
    ]);
  }
}

/** Cuts `text` to `limit` bytes (on a line boundary when one is near) and says how much was cut. */
export function bound(text: string, limit: number): string {
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= limit) return text;
  let cut = bytes.subarray(0, limit).toString("utf8");
  const newline = cut.lastIndexOf("\n");
  if (newline > limit / 2) cut = cut.slice(0, newline + 1);
  const dropped = bytes.length - Buffer.byteLength(cut, "utf8");
  return `${cut}\n[diff cut: ${dropped} more bytes not shown]\n`;
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

function run(file: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      file,
      args,
      { maxBuffer: 64 * 1024 * 1024, env: { ...inheritedEnvironment(), GIT_TERMINAL_PROMPT: "0" } },
      (error, stdout, stderr) => {
        if (error === null) resolve(stdout);
        else
          reject(
            new Error(
              `git ${args.slice(2, 4).join(" ")} failed: ${stderr.trim() || error.message}`,
            ),
          );
      },
    );
  });
}
