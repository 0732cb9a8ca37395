import { spawn } from "node:child_process";
import type { Readable } from "node:stream";
import { inheritedEnvironment } from "../../../settings/process-environment.js";

/** How a git subprocess of the hub ended. */
export interface GitRun {
  exitCode: number;
  stdout: Buffer;
  stderr: string;
}

/** The most a hub git subprocess may print before it is killed (a pack is streamed, not read). */
const MAX_OUTPUT = 256 * 1024 * 1024;

/**
 * Runs `git` with `args` (never through a shell) in `cwd` with exactly `env` plus a few safe
 * defaults, feeding `input` to its stdin; resolves once it exits.
 */
export function runGit(
  args: readonly string[],
  options: { cwd: string; env?: Record<string, string>; input?: Buffer | Readable },
): Promise<GitRun> {
  return new Promise((resolve, reject) => {
    const child = spawn("git", args, {
      cwd: options.cwd,
      env: gitEnv(options.env),
      stdio: ["pipe", "pipe", "pipe"],
    });
    const stdout: Buffer[] = [];
    let size = 0;
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_OUTPUT) child.kill("SIGKILL");
      else stdout.push(chunk);
    });
    child.stderr.on("data", (chunk: Buffer) => {
      if (stderr.length < 16 * 1024) stderr += chunk.toString("utf8");
    });
    child.stdin.on("error", () => undefined);
    if (options.input === undefined) child.stdin.end();
    else if (Buffer.isBuffer(options.input)) child.stdin.end(options.input);
    else options.input.pipe(child.stdin);
    child.once("error", reject);
    child.once("close", (code, signal) =>
      resolve({
        exitCode: code ?? (signal === null ? 1 : 128),
        stdout: Buffer.concat(stdout),
        stderr,
      }),
    );
  });
}

/** Runs git and returns its stdout as text; throws with git's message when it fails. */
export async function gitText(
  args: readonly string[],
  options: { cwd: string; env?: Record<string, string>; input?: Buffer },
): Promise<string> {
  const run = await runGit(args, options);
  if (run.exitCode !== 0) {
    throw new Error(`git ${args[0] ?? ""} exited with ${run.exitCode}: ${run.stderr.trim()}`);
  }
  return run.stdout.toString("utf8");
}

/**
 * The environment of a hub git subprocess: PATH and HOME of the hub, no prompts, no system or
 * global configuration (nothing of the host's git setup applies to DevBox traffic), then `extra`.
 */
export function gitEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {
    GIT_TERMINAL_PROMPT: "0",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_AUTHOR_NAME: "ClusterCode",
    GIT_AUTHOR_EMAIL: "clustercode@users.noreply.github.com",
    GIT_COMMITTER_NAME: "ClusterCode",
    GIT_COMMITTER_EMAIL: "clustercode@users.noreply.github.com",
  };
  const inherited = inheritedEnvironment();
  for (const name of ["PATH", "HOME", "LANG"]) {
    const value = inherited[name];
    if (value !== undefined) env[name] = value;
  }
  return { ...env, ...extra };
}
