import { constants } from "node:fs";
import { access, mkdir } from "node:fs/promises";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import type { RunSnapshot } from "../engine/model.js";
import { describeFsError, EXIT, UsageError, type CommandIo } from "./command.js";
import { reasonNote } from "./evidence-narrator.js";
import type { Settings } from "../settings/index.js";

/** Output formats of the run commands. */
export const RUN_FORMATS = ["human", "json"] as const;

/** The decoded settings the state directory is found by. */
export type StateDirSettings = Pick<Settings["store"], "stateDir" | "xdgStateHome" | "home">;

/**
 * The state directory: `--state-dir`, else CLUSTERCODE_STATE_DIR, else
 * `$XDG_STATE_HOME/clustercode`, else `~/.local/state/clustercode` (`store`: those settings,
 * decoded at start).
 */
export function resolveStateDir(option: string | undefined, store: StateDirSettings): string {
  if (option !== undefined && option !== "") return resolve(option);
  if (store.stateDir) return resolve(store.stateDir);
  const base = store.xdgStateHome || join(store.home ?? homedir(), ".local", "state");
  return resolve(base, "clustercode");
}

/**
 * The state directory as {@link resolveStateDir} finds it, created when missing; a directory
 * that cannot be used is a one-line usage error naming it, not a raw system error.
 */
export async function usableStateDir(
  option: string | undefined,
  store: StateDirSettings,
): Promise<string> {
  const dir = resolveStateDir(option, store);
  try {
    await mkdir(dir, { recursive: true });
    await access(dir, constants.W_OK | constants.X_OK);
    return dir;
  } catch (error) {
    throw new UsageError(
      `cannot use the state directory ${dir}: ${describeFsError(error)} (choose another with --state-dir or CLUSTERCODE_STATE_DIR)`,
      { cause: error },
    );
  }
}

/** The exit code for where a run stands: 0 succeeded, 3 awaiting input, 1 otherwise. */
export function exitCodeOf(state: RunSnapshot): number {
  if (state.status === "succeeded") return EXIT.ok;
  if (state.status === "awaiting_input") return EXIT.awaiting;
  return EXIT.notOk;
}

/** The machine-readable summary of a run: the last line of stdout with `--format json`. */
export function summarize(state: RunSnapshot): Record<string, unknown> {
  return {
    run: state.runId,
    status: state.status,
    branch: state.branch,
    ...(state.reason === undefined ? {} : { reason: state.reason }),
    ...(state.awaiting === undefined ? {} : { awaiting: state.awaiting }),
    costUsd: state.costUsd,
    visits: state.visits.map((visit) => ({
      node: visit.node,
      attempt: visit.attempt,
      outcome: visit.outcome ?? null,
      label: visit.label ?? null,
    })),
  };
}

/** Prints where a run stands and returns the exit code. */
export function finish(
  io: CommandIo,
  state: RunSnapshot,
  format: (typeof RUN_FORMATS)[number],
): number {
  if (format === "json") {
    io.stdout.write(`${JSON.stringify(summarize(state))}\n`);
  } else {
    io.stdout.write(`run ${state.runId}: ${state.status}${reasonNote(state.reason)}\n`);
    io.stdout.write(`branch: ${state.branch}\n`);
    if (state.awaiting?.kind === "approval") {
      io.stdout.write(
        `waiting for approval of ${state.awaiting.node}: clustercode approve ${state.runId}\n`,
      );
    } else if (state.awaiting?.kind === "lost") {
      io.stdout.write(
        `${state.awaiting.node} was lost mid-command and is not idempotent: check the real world, then clustercode retry ${state.runId} or clustercode resolve ${state.runId} succeeded|failed\n`,
      );
    }
  }
  return exitCodeOf(state);
}

/** The run id argument, or a usage error. */
export function runIdArgument(positionals: string[], usage: string): string {
  const [runId] = positionals;
  if (runId === undefined || runId === "") throw new UsageError(usage);
  return runId;
}
