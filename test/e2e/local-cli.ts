import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
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

/**
 * Environment for CLI processes: the product's DevBox timings (a sandboxed DevBox's boot on a
 * loaded 2-core machine outlasts a short lapse); tests of lost DevBoxes shorten them.
 */
export function cliEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
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

/**
 * The checkouts of the DevBoxes a state directory has run. A DevBox is sandboxed: its own
 * directory is the one place both it and the test see, so a test talks to a command through
 * files in the checkout's `.git` (never committed), not through paths of its own.
 */
export function devboxCheckouts(state: string): string[] {
  const devboxes = join(state, "devboxes");
  if (!existsSync(devboxes)) return [];
  return readdirSync(devboxes)
    .map((id) => join(devboxes, id, "checkout"))
    .filter((checkout) => existsSync(join(checkout, ".git")));
}

/**
 * Waits (20 s at most) until a DevBox's command wrote `.git/<name>`; that DevBox's directory.
 * DevBoxes whose directories are in `skip` do not count.
 */
export async function waitForDevBoxFile(
  state: string,
  name: string,
  skip: readonly string[] = [],
): Promise<string> {
  for (let i = 0; i < 200; i++) {
    const checkout = devboxCheckouts(state).find(
      (dir) => existsSync(join(dir, ".git", name)) && !skip.includes(join(dir, "..")),
    );
    if (checkout !== undefined) return join(checkout, "..");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no DevBox of ${state} wrote .git/${name}`);
}

/** Writes `.git/<name>` into every DevBox checkout of `state` (opens a command's gate). */
export function writeDevBoxFile(state: string, name: string): void {
  for (const checkout of devboxCheckouts(state)) writeFileSync(join(checkout, ".git", name), "");
}

/** The lines every DevBox of `state` wrote to `.git/<name>`, DevBox after DevBox. */
export function devboxLines(state: string, name: string): string[] {
  return devboxCheckouts(state).flatMap((checkout) => linesOf(join(checkout, ".git", name)));
}
