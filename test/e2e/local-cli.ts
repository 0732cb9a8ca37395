import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const CLI = new URL("../../dist/cli/main.js", import.meta.url).pathname;

/** A throwaway git repository with one commit on `main`, and a state directory beside it. */
export function makeRepo(files: Record<string, string> = {}): {
  repo: string;
  state: string;
  root: string;
} {
  const root = mkdtempSync(join(tmpdir(), "clustercode-e2e-"));
  const repo = join(root, "repo");
  const git = (...args: string[]) => execFileSync("git", args, { cwd: repo, stdio: "pipe" });
  execFileSync("git", ["init", "-q", "-b", "main", repo]);
  git("config", "user.email", "dev@example.com");
  git("config", "user.name", "Dev");
  writeFileSync(join(repo, "README.md"), "# demo\n");
  for (const [name, content] of Object.entries(files))
    writeFileSync(join(repo, name), content, { mode: 0o755 });
  git("add", "-A");
  git("commit", "-qm", "initial");
  return { repo, state: join(root, "state"), root };
}

/** What a finished CLI process gave. */
export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Environment for CLI processes: short DevBox timings so lost DevBoxes are noticed fast. */
export function cliEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    CLUSTERCODE_DEVBOX_HEARTBEAT_MS: "200",
    CLUSTERCODE_DEVBOX_LAPSE_MS: "1500",
    // DevBoxes push to local repositories the test (root, in CI) owns, which a sandboxed
    // DevBox's own uid cannot write: unsandboxed on purpose until git goes through the hub.
    // The walls are tested in test/security/devbox-walls.test.ts.
    CLUSTERCODE_UNSAFE_LOCAL_DEVBOX: "1",
    ...extra,
  };
}

/** Starts `clustercode ARGS` as a process. */
export function startCli(
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv },
): ChildProcess {
  return spawn(process.execPath, [CLI, ...args], {
    cwd: options.cwd,
    env: options.env ?? cliEnv(),
  });
}

/** Runs `clustercode ARGS` to its end (bounded by `timeoutMs`). */
export function runCli(
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<CliResult> {
  const child = startCli(args, options);
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 60_000);
  return new Promise((resolve) =>
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    }),
  );
}

/** The JSON summary a run command prints as its last line with `--format json`. */
export function summaryOf(result: CliResult): {
  run: string;
  status: string;
  branch: string;
  visits: { node: string; attempt: number; outcome: string | null; label: string | null }[];
} {
  const last = result.stdout.trim().split("\n").at(-1) ?? "";
  try {
    return JSON.parse(last) as ReturnType<typeof summaryOf>;
  } catch {
    throw new Error(`no JSON summary; stdout: ${result.stdout}\nstderr: ${result.stderr}`);
  }
}

/** Lines of a file, or none when it does not exist. */
export function linesOf(path: string): string[] {
  try {
    return readFileSync(path, "utf8")
      .split("\n")
      .filter((line) => line !== "");
  } catch {
    return [];
  }
}

/** Collects a child's output, and waits (boundedly) until it shows something. */
export function watch(child: ChildProcess) {
  const seen = { stdout: "", stderr: "" };
  child.stdout?.on("data", (chunk: Buffer) => (seen.stdout += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (seen.stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
  const until = async (test: (out: typeof seen) => boolean, what: string) => {
    for (let i = 0; i < 900 && !test(seen); i++) await new Promise((r) => setTimeout(r, 100));
    if (!test(seen)) throw new Error(`never saw ${what}; stdout: ${seen.stdout}\n${seen.stderr}`);
  };
  return { child, seen, exited, until };
}
