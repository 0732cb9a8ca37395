import { parseDuration } from "../../workflow/duration.js";
import type { CommandResult } from "../commands.js";
import type { NodeProgress, NodeStop } from "../model.js";
import type { Transition } from "../transition.js";
import { beginStop, STOP_WORDS } from "./begin-stop.js";

/** An agent turn as evidence names it. */
export type AgentTurn = { engine: string; model?: string | undefined };

/** Sets the active container node's `timeout` timer, when it has one. */
export function setNodeTimeout(t: Transition, timeout: string | undefined): void {
  if (timeout === undefined) return;
  const active = t.active;
  const timerId = `timeout:${active.visit}:${t.visit.attempt}`;
  active.timeoutTimer = timerId;
  t.setTimer(timerId, t.at + parseDuration(timeout));
}

/** Claims a DevBox for the active node unless the run holds a ready one; then `start`s work. */
export function ensureDevBox(t: Transition, start: (t: Transition) => void): void {
  const s = t.snapshot;
  if (s.devbox?.ready === true) {
    start(t);
    return;
  }
  if (s.devbox === undefined) s.devbox = t.claimDevBox(s.branch);
  t.active.progress = { kind: "claim" };
}

/** The run's DevBox, which the active node's work needs. */
export function runDevBoxId(t: Transition): string {
  const devbox = t.snapshot.devbox;
  if (devbox === undefined) throw new Error("programmer error: no DevBox");
  return devbox.id;
}

/** Why a result is not the active node's running command in the run's DevBox, if it is not. */
export function staleRunCommand(
  t: Transition,
  devboxId: string,
  result: CommandResult,
): string | undefined {
  const progress = t.active.progress;
  const current =
    progress.kind === "exec" || progress.kind === "loop" ? progress.commandId : undefined;
  if (current !== result.commandId || t.snapshot.devbox?.id !== devboxId) {
    return "stale command result";
  }
  return undefined;
}

/** Records a command of the active node ending, naming the agent when it was an agent turn. */
export function recordCommandFinished(
  t: Transition,
  result: CommandResult,
  agent: AgentTurn | undefined,
): void {
  if (agent !== undefined) {
    t.snapshot.lastAuthor = {
      engine: agent.engine,
      ...(agent.model === undefined ? {} : { model: agent.model }),
    };
  }
  t.record("command.finished", {
    node: t.active.node,
    attempt: t.visit.attempt,
    command: result.commandId,
    ...(agent === undefined ? {} : { engine: agent.engine, model: agent.model }),
    exitCode: result.exitCode,
    durationMs: result.durationMs,
    ...(result.costUsd === undefined ? {} : { costUsd: result.costUsd }),
    ...(result.proxiedCostUsd === undefined ? {} : { proxiedCostUsd: result.proxiedCostUsd }),
    ...(result.usage === undefined ? {} : { usage: result.usage }),
    ...(result.sha === undefined ? {} : { sha: result.sha }),
    output: result.output.slice(-4000),
  });
}

/** Is the active node's running command its checkpoint? */
export function isCheckpointing(progress: NodeProgress): boolean {
  return (progress.kind === "exec" || progress.kind === "loop") && progress.step === "checkpoint";
}

/**
 * Ends a container node's work with `outcome`: its changes are checkpointed first (committed
 * and pushed to the run branch), then the run routes.
 */
export function finishContainer(t: Transition, outcome: string, reason?: string): void {
  const active = t.active;
  const devbox = t.snapshot.devbox;
  active.pendingOutcome = reason === undefined ? { outcome } : { outcome, reason };
  if (devbox?.ready !== true) {
    t.completeNode(outcome, reason);
    return;
  }
  const message = `clustercode: ${active.node} (${outcome})`;
  const commandId = t.dispatch(devbox.id, { type: "checkpoint", message });
  if (active.progress.kind === "loop") {
    active.progress = { ...active.progress, step: "checkpoint", commandId };
  } else {
    active.progress = { kind: "exec", commandId, step: "checkpoint" };
  }
}

/** The container's checkpoint ended: route on the outcome decided before it (or stop). */
export function onCheckpoint(t: Transition, result: CommandResult): void {
  const pending = t.active.pendingOutcome ?? { outcome: "succeeded" };
  if (pending.stop !== undefined) {
    if (result.exitCode === 0) recordCheckpoint(t, result);
    else t.record("checkpoint.failed", { node: t.active.node, exitCode: result.exitCode });
    t.finishStop(pending.stop, pending.reason ?? pending.outcome);
    return;
  }
  if (result.exitCode !== 0) {
    t.completeNode("failed", `checkpoint failed (exit ${result.exitCode})`);
    return;
  }
  recordCheckpoint(t, result);
  t.completeNode(pending.outcome, pending.reason);
}

function recordCheckpoint(t: Transition, result: CommandResult): void {
  const s = t.snapshot;
  if (result.sha !== undefined) s.lastSha = result.sha;
  s.branchPushed = true;
  t.record("checkpoint", { node: t.active.node, branch: s.branch, sha: result.sha });
}

/**
 * Stops a run or loop node: with a ready DevBox it interrupts the running command (unless a
 * budget stop, where nothing runs any more), lets `beforeStop` tidy up, and checkpoints what is
 * there before the stop takes effect; without one the stop takes effect at once.
 */
export function stopContainer(
  t: Transition,
  stop: NodeStop,
  reason: string,
  beforeStop?: (t: Transition, progress: NodeProgress) => void,
): void {
  const active = t.active;
  const devbox = t.snapshot.devbox;
  if (devbox?.ready !== true) {
    t.finishStop(stop, reason);
    return;
  }
  const progress = active.progress;
  const running = stop === "budget" ? undefined : runningCommand(progress);
  if (running !== undefined) {
    t.emit({ type: "command.interrupt", devboxId: devbox.id, commandId: running });
  }
  beforeStop?.(t, progress);
  beginStop(t, stop, reason, running);
  if (isCheckpointing(progress)) return; // the checkpoint in flight saves the work
  const message = `clustercode: checkpoint ${active.node} (${STOP_WORDS[stop]})`;
  const commandId = t.dispatch(devbox.id, { type: "checkpoint", message });
  active.progress =
    progress.kind === "loop"
      ? { ...progress, step: "checkpoint", commandId }
      : { kind: "exec", commandId, step: "checkpoint" };
}

/** The command the DevBox runs for the node now, unless it is a checkpoint. */
function runningCommand(progress: NodeProgress): string | undefined {
  if (progress.kind === "exec" && progress.step !== "checkpoint") return progress.commandId;
  if (progress.kind === "loop" && (progress.step === "agent" || progress.step === "gate")) {
    return progress.commandId;
  }
  return undefined;
}

/** Why a failed command failed, for the visit's reason. */
export function exitReason(result: CommandResult): string | undefined {
  if (result.exitCode === 0) return undefined;
  return result.refused ?? `exit code ${result.exitCode}`;
}
