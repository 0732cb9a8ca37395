import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, mkdir, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/** The built CLI; `npm test` builds it before running the tests. */
export const CLI = join(import.meta.dirname, "../../dist/cli/main.js");
/** The lifecycle example, as an absolute path. */
export const LIFECYCLE = join(import.meta.dirname, "../../workflows-schema/examples/lifecycle.yml");

/** What a finished process left behind. */
export interface Exit {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `node [nodeArgs] dist/cli/main.js args` in `cwd`. */
export function runCli(
  args: string[],
  options: { cwd?: string; nodeArgs?: string[]; env?: NodeJS.ProcessEnv } = {},
): Promise<Exit> {
  if (!existsSync(CLI)) {
    throw new Error(`${CLI} is missing: run "npm run build" first (npm test does it)`);
  }
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...(options.nodeArgs ?? []), CLI, ...args],
      {
        cwd: options.cwd ?? process.cwd(),
        // DevBoxes push to local repositories the test (root, in CI) owns, which a sandboxed
        // DevBox's own uid cannot write: unsandboxed on purpose until git goes through the hub.
        env: { ...process.env, ...options.env },
      },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : -1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** A fresh temporary directory holding `files` (relative path → content). */
export async function tempDir(files: Record<string, string> = {}): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "clustercode-cli-"));
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  return dir;
}
