import { execFile } from "node:child_process";
import { rm, writeFile } from "node:fs/promises";
import { relative } from "node:path";
import { promisify } from "node:util";
import { OutputTail } from "../output-tail.js";
import { killGroup, runProcess } from "../process-runner.js";
import type { LocalDevBoxPaths } from "./devbox-paths.js";
import { writeFileInside } from "./no-follow.js";
import { sandboxedAgent, type Isolation } from "./sandbox.js";

const run = promisify(execFile);

/** What a warm DevBox's setup runs with. */
export interface WarmSetupOptions {
  isolation: Isolation;
  cliPath: string;
  /** PATH, HOME and LANG of the runtime. */
  env: Record<string, string>;
  /** Set when the app runs as root: the uid the setup runs as. */
  uid?: number;
  /** The host's mirror the warm checkout borrows its objects from, bound read-only. */
  mirror?: string;
}

/**
 * Runs `setup` in a warm DevBox's checkout, one command at a time with `bash -eo pipefail`, in
 * the same sandbox as a claimed DevBox's agent but with no way to the hub at all: no token, no
 * secret, no network (a setup that needs them fails here and runs again at the claim). Resolves
 * to whether every command passed.
 */
export async function runWarmSetup(
  paths: LocalDevBoxPaths,
  setup: readonly string[],
  signal: AbortSignal,
  options: WarmSetupOptions,
): Promise<boolean> {
  const env: Record<string, string> = { ...options.env, HOME: paths.home, TMPDIR: paths.tmp };
  // The sandbox binds a hub socket; before the claim there is none, only an empty file. It lives
  // beside the DevBox's directory, not in it: bwrap resolves a bind's source on the host, and a
  // setup command could have put a link to a host file in its place for the next one to bind.
  const noHub = `${paths.dir}.no-hub`;
  if (options.isolation.kind !== "none") {
    await writeFile(noHub, "", { mode: 0o600 });
    // The mirror belongs to the app's user, not the DevBox's: git must be told to trust it.
    if (options.mirror !== undefined) {
      const config = `[safe]\n\tdirectory = ${options.mirror}\n`;
      await writeFileInside(paths.dir, `${relative(paths.dir, paths.home)}/.gitconfig`, config);
    }
    if (options.uid !== undefined) {
      const owner = `${options.uid}:${options.uid}`;
      await run("chown", ["-R", owner, paths.checkout, paths.tmp, paths.home]);
    }
  }
  try {
    for (const script of setup) {
      const command = ["bash", "-eo", "pipefail", "-c", script];
      const { file, args } =
        options.isolation.kind === "none"
          ? { file: "bash", args: command.slice(1) }
          : sandboxedAgent(
              {
                bwrap: options.isolation.bwrap,
                devboxDir: paths.dir,
                hubSocket: noHub,
                ...(options.mirror === undefined ? {} : { mirror: options.mirror }),
                cliPath: options.cliPath,
                path: env.PATH ?? "",
                ...(options.uid === undefined ? {} : { uid: options.uid }),
                env,
                cwd: paths.checkout,
              },
              command,
            );
      const output = new OutputTail(4096);
      const cwd = paths.checkout;
      let pgid: number | undefined;
      const onSpawn = (pid: number) => (pgid = pid);
      const { exitCode } = await runProcess({
        ...{ file, args, cwd, env, signal, output, onSpawn },
        wrap: nice,
      });
      // Nothing a warm setup started outlives it: the DevBox waits as files, not processes.
      if (pgid !== undefined) killGroup(pgid, "SIGKILL");
      if (exitCode !== 0 || signal.aborted) return false;
    }
    return true;
  } finally {
    await rm(noHub, { force: true });
  }
}

/**
 * Runs a warm DevBox's work at a lower priority: it is for later claims, and must not slow the
 * claimed DevBoxes and the app on a small machine.
 */
export function nice(file: string, args: readonly string[]): { file: string; args: string[] } {
  return { file: "nice", args: ["-n", "10", file, ...args] };
}
