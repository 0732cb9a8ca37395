import { spawn, type ChildProcessByStdio } from "node:child_process";
import { constants } from "node:os";
import type { Readable } from "node:stream";
import { MaskedStreams } from "./agent/masked-streams.js";
import { SecretMask } from "./agent/secret-mask.js";
import type { OutputTail } from "./output-tail.js";

/** How to run one process in its own process group. */
export interface RunProcessOptions {
  file: string;
  args: readonly string[];
  cwd: string;
  env: Record<string, string>;
  /** Aborting kills the whole process group (SIGTERM, then SIGKILL after `killGraceMs`). */
  signal: AbortSignal;
  /** Receives stdout and stderr interleaved, masked (see {@link MaskedStreams}). */
  output: OutputTail;
  /** Secrets masked in `output` and `tee`; default none. */
  mask?: SecretMask;
  /** Receives stdout only, unmasked (to find an agent's cost report or git's answer). */
  stdout?: OutputTail;
  /** Called with the masked text too, as it can be shown (the agent's log). */
  tee?: (text: string) => void;
  /** Called once the process exists, with its pid (= its process group id). */
  onSpawn?: (pid: number) => void;
  killGraceMs?: number;
  /** Wraps the file and args before they start (the DevBox's command sandbox). */
  wrap?: (file: string, args: readonly string[]) => { file: string; args: string[] };
}

/** How a process ended: its exit code, or 128 + signal number, or 127 when it could not start. */
export interface ProcessExit {
  exitCode: number;
}

/** Sends `signal` to process group `pgid`; false when the group no longer exists. */
export function killGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ESRCH") return false;
    throw error;
  }
}

/**
 * Runs a process without a shell (the caller picks `bash -c` when it wants one) as the leader of a
 * new process group, so that everything it starts can be killed together.
 */
export function runProcess(options: RunProcessOptions): Promise<ProcessExit> {
  return new Promise((resolve) => {
    if (options.signal.aborted) return resolve({ exitCode: 128 + constants.signals.SIGTERM });
    const { file, args } = options.wrap?.(options.file, options.args) ?? options;
    const child = spawn(file, args, {
      cwd: options.cwd,
      env: options.env,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let graceTimer: NodeJS.Timeout | undefined;
    let aborted = false;
    const abort = () => {
      if (child.pid === undefined) return;
      aborted = true;
      killGroup(child.pid, "SIGTERM");
      const pid = child.pid;
      graceTimer = setTimeout(() => killGroup(pid, "SIGKILL"), options.killGraceMs ?? 2000);
    };
    const { show, end } = showOutput(child, options);

    let settled = false;
    const finish = (exitCode: number) => {
      if (settled) return;
      settled = true;
      clearTimeout(graceTimer);
      end();
      // Once the leader is gone, whatever of its group ignored SIGTERM is killed outright.
      if (aborted && child.pid !== undefined) killGroup(child.pid, "SIGKILL");
      options.signal.removeEventListener("abort", abort);
      resolve({ exitCode });
    };
    child.once("error", (error: NodeJS.ErrnoException) => {
      // Only a failed spawn gets here (we never write to stdin or kill through `child`).
      show(`clustercode: cannot run ${options.file}: ${error.code ?? error.message}\n`);
      finish(error.code === "ENOENT" ? 127 : 126);
    });
    child.once("spawn", () => {
      if (child.pid !== undefined) options.onSpawn?.(child.pid);
      if (options.signal.aborted) abort();
      else options.signal.addEventListener("abort", abort, { once: true });
    });
    finishAfterExit(child, finish);
  });
}

/** A child process run by {@link runProcess}: no stdin, stdout and stderr piped. */
type PipedChild = ChildProcessByStdio<null, Readable, Readable>;

/**
 * Shows the child's output as it comes, masked, in `output` and `tee` (stdout also unmasked in
 * `stdout`); `show` adds the runner's own lines, `end` flushes what the masks still hold.
 */
function showOutput(
  child: PipedChild,
  options: RunProcessOptions,
): { show: (text: string) => void; end: () => void } {
  const streams = new MaskedStreams(options.mask ?? SecretMask.none);
  const show = (text: string) => {
    if (text === "") return;
    options.output.push(text);
    options.tee?.(text);
  };
  child.stdout.on("data", (chunk: Buffer) => {
    options.stdout?.push(chunk);
    show(streams.write("stdout", chunk));
  });
  child.stderr.on("data", (chunk: Buffer) => show(streams.write("stderr", chunk)));
  return { show, end: () => show(streams.end()) };
}

/** Calls `finish` with the exit code once the child exited and its output drained. */
function finishAfterExit(child: PipedChild, finish: (exitCode: number) => void): void {
  child.once("exit", (code, signal) => {
    const exitCode = code ?? 128 + (signal === null ? 0 : constants.signals[signal]);
    // Wait for the output to drain, but not for background processes that hold the pipes open.
    const drained = setTimeout(() => {
      child.stdout.destroy();
      child.stderr.destroy();
      finish(exitCode);
    }, 1000);
    child.once("close", () => {
      clearTimeout(drained);
      finish(exitCode);
    });
  });
}
