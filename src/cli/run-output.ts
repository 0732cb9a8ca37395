import { homedir } from "node:os";
import { join, resolve } from "node:path";
import type { Effect, EvidenceEntry, RunSnapshot } from "../engine/model.js";
import type { RunDocument } from "../runtime/runtime.js";
import { UsageError, type CommandIo } from "./command.js";

/** Output formats of the run commands. */
export const RUN_FORMATS = ["human", "json"] as const;

/**
 * The state directory: `--state-dir`, else CLUSTERCODE_STATE_DIR, else
 * `$XDG_STATE_HOME/clustercode`, else `~/.local/state/clustercode`.
 */
export function resolveStateDir(option: string | undefined, env: NodeJS.ProcessEnv): string {
  if (option !== undefined && option !== "") return resolve(option);
  if (env.CLUSTERCODE_STATE_DIR) return resolve(env.CLUSTERCODE_STATE_DIR);
  const base = env.XDG_STATE_HOME || join(env.HOME ?? homedir(), ".local", "state");
  return resolve(base, "clustercode");
}

/** The exit code for where a run stands: 0 succeeded, 3 awaiting input, 1 otherwise. */
export function exitCodeOf(state: RunSnapshot): number {
  if (state.status === "succeeded") return 0;
  if (state.status === "awaiting_input") return 3;
  return 1;
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

/** Prints a run's progress as it goes (human format) from the evidence of each transition. */
export function progressPrinter(io: CommandIo, format: (typeof RUN_FORMATS)[number]) {
  const commands = new Map<unknown, string>();
  return (_run: RunDocument, effects: Effect[]) => {
    if (format !== "human") return;
    for (const effect of effects) {
      if (effect.type !== "evidence") continue;
      const entry = effect.entry;
      if (entry.kind === "command.dispatched") {
        const what = [entry.run, entry.agent, entry.checkpoint].find(
          (text) => typeof text === "string",
        );
        const label = entry.agent === what && what !== undefined ? `agent ${what}` : what;
        commands.set(
          entry.command,
          firstLine(typeof label === "string" ? label : String(entry.command)),
        );
      }
      const line = describeEvidence(
        entry.kind === "command.finished"
          ? { ...entry, command: commands.get(entry.command) ?? entry.command }
          : entry,
      );
      if (line !== undefined) io.stdout.write(`${line}\n`);
    }
  };
}

/** One line for an evidence entry a person follows, or undefined for the quiet ones. */
export function describeEvidence(entry: EvidenceEntry): string | undefined {
  const e = entry as EvidenceEntry & Record<string, string | number | undefined>;
  switch (entry.kind) {
    case "node.entered":
      return `▶ ${e.node} (${e.nodeKind}${attemptNote(e.attempt)})`;
    case "command.finished":
      return `  ${e.exitCode === 0 ? "✓" : "✗"} ${e.command}: exit ${e.exitCode} in ${formatMs(Number(e.durationMs))}${e.costUsd === undefined ? "" : ` ($${Number(e.costUsd).toFixed(2)})`}`;
    case "loop.iteration":
      return `  ↻ iteration ${e.iteration}: ${(entry.failedGates as string[]).length === 0 ? "all gates passed" : `failed ${(entry.failedGates as string[]).join(", ")}`}`;
    case "decision.evaluated":
      return `  ◆ ${e.evaluator}: ${e.verdict ?? e.error}${e.reasoning === undefined ? "" : ` (${e.reasoning})`}`;
    case "node.finished":
      return `■ ${e.node}: ${e.outcome}${e.to === undefined ? "" : ` → ${e.to}`}${e.reason === undefined ? "" : ` (${e.reason})`}`;
    case "approval.requested":
      return `⏸ ${e.node} waits for approval${e.message === undefined ? "" : `: ${e.message}`}`;
    case "approval.answered":
      return `  ✔ ${e.decision} by ${e.actor}`;
    case "node.stopping":
      return `  ⏹ ${e.node} stopped (${e.reason}): checkpointing its work first`;
    case "budget.reset":
      return `  ↺ budgets reset by ${e.actor} for ${e.node}`;
    case "attempt.lost":
      return `  ⚠ attempt ${e.attempt ?? ""} lost: ${e.reason}`;
    case "run.finished":
      return `● run ${e.status}${e.reason === undefined ? "" : `: ${e.reason}`}`;
    default:
      return undefined;
  }
}

function firstLine(text: string): string {
  const line = text.split("\n")[0] ?? "";
  return line.length > 60 ? `${line.slice(0, 57)}...` : line;
}

function attemptNote(attempt: unknown): string {
  return typeof attempt === "number" && attempt > 1 ? `, attempt ${attempt}` : "";
}

function formatMs(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
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
    io.stdout.write(
      `run ${state.runId}: ${state.status}${state.reason === undefined ? "" : ` (${state.reason})`}\n`,
    );
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
