import { completeNode, endRun } from "./flow.js";
import type { NodeProgress, NodeStop } from "./model.js";
import { stopVariants } from "./prototype.js";
import type { Transition } from "./transition.js";
import { utcDay } from "./utc-day.js";

/** How long a stopped node's checkpoint may take before its DevBox is released without one. */
export const CHECKPOINT_GRACE_MS = 10 * 60_000;

/** How a stop names itself in the checkpoint's commit message. */
const STOP_WORDS: Record<NodeStop, string> = {
  timeout: "timed out",
  budget: "run budget exceeded",
  "wall-clock": "run wall clock exceeded",
};

/**
 * Stops the active node before its work ended: by its `timeout` (the node ends `timed_out`), or
 * by the run's budget or wall clock (the run ends `failed` with `reason`). A run or loop node
 * holding a ready DevBox first interrupts its running command and checkpoints what is there
 * (a commit on the run branch, pushed), so partial work survives; only then is the DevBox
 * released. A prototype does the same for each variant at work, on the variant's branch. A checkpoint that takes over {@link CHECKPOINT_GRACE_MS} is given up.
 */
export function stopNode(t: Transition, stop: NodeStop, reason: string): void {
  const s = t.snapshot;
  const active = s.active;
  if (active === undefined) {
    endRun(t, "failed", reason);
    return;
  }
  const pending = active.pendingOutcome;
  if (pending?.stop !== undefined) {
    // Stopped again while checkpointing: a run-level stop ends the run once it is done.
    if (stop !== "timeout") active.pendingOutcome = { ...stopOutcome(stop, reason), stop };
    return;
  }
  const node = t.node(active.node);
  const devbox = s.devbox;
  if (node.kind === "prototype") {
    if (stopVariants(t, STOP_WORDS[stop])) beginStop(t, stop, reason);
    else finishStop(t, stop, reason);
    return;
  }
  if ((node.kind !== "run" && node.kind !== "loop") || devbox?.ready !== true) {
    finishStop(t, stop, reason);
    return;
  }
  const progress = active.progress;
  // A budget stops the node as a command's cost comes in: nothing runs any more.
  const running = stop === "budget" ? undefined : runningCommand(progress);
  if (running !== undefined) {
    t.emit({ type: "command.interrupt", devboxId: devbox.id, commandId: running });
  }
  returnUnusedReservation(t, progress);
  beginStop(t, stop, reason, running);
  if (isCheckpointing(progress)) return; // the checkpoint in flight saves the work
  const message = `clustercode: checkpoint ${active.node} (${STOP_WORDS[stop]})`;
  const commandId = t.dispatch(devbox.id, { type: "checkpoint", message });
  active.progress =
    progress.kind === "loop"
      ? { ...progress, step: "checkpoint", commandId }
      : { kind: "exec", commandId, step: "checkpoint" };
}

/** Records the stop and gives the checkpoints {@link CHECKPOINT_GRACE_MS} to finish. */
function beginStop(t: Transition, stop: NodeStop, reason: string, interrupted?: string): void {
  const active = t.active;
  t.record("node.stopping", {
    node: active.node,
    attempt: t.visit.attempt,
    stop,
    reason,
    ...(interrupted === undefined ? {} : { interrupted }),
  });
  active.pendingOutcome = { ...stopOutcome(stop, reason), stop };
  t.cancelTimer(active.timeoutTimer);
  active.timeoutTimer = `checkpoint:${active.visit}:${t.visit.attempt}`;
  t.setTimer(active.timeoutTimer, t.at + CHECKPOINT_GRACE_MS);
}

/** A stopped node's checkpoint ended (or its grace ran out): the stop takes effect. */
export function finishStop(t: Transition, stop: NodeStop, reason: string): void {
  const s = t.snapshot;
  if (stop !== "timeout") {
    endRun(t, "failed", reason, s.active?.node);
    return;
  }
  // A timed-out DevBox may be in any state: the next node starts in a new one.
  const progress = s.active?.progress;
  if (progress?.kind === "prototype") {
    for (const variant of progress.variants) {
      if (variant.phase !== "failed" && variant.phase !== "cancelled") {
        t.releaseDevBox(variant.devbox);
      }
    }
  } else {
    t.releaseDevBox(s.devbox);
  }
  delete s.devbox;
  completeNode(t, "timed_out", reason);
}

function stopOutcome(stop: NodeStop, reason: string): { outcome: string; reason: string } {
  return { outcome: stop === "timeout" ? "timed_out" : "failed", reason };
}

/** The command the DevBox runs for the node now, unless it is a checkpoint. */
function runningCommand(progress: NodeProgress): string | undefined {
  if (progress.kind === "exec" && progress.step !== "checkpoint") return progress.commandId;
  if (progress.kind === "loop" && (progress.step === "agent" || progress.step === "gate")) {
    return progress.commandId;
  }
  return undefined;
}

function isCheckpointing(progress: NodeProgress): boolean {
  return (progress.kind === "exec" || progress.kind === "loop") && progress.step === "checkpoint";
}

/**
 * A loop waiting on the daily ledger has reserved an iteration that will not run: the
 * reservation goes back. An interrupted agent turn keeps its reservation, as it may have spent.
 */
function returnUnusedReservation(t: Transition, progress: NodeProgress): void {
  if (progress.kind !== "loop" || progress.step !== "ledger") return;
  const reserved = progress.reservedUsd ?? 0;
  progress.reservedUsd = 0;
  if (reserved === 0) return;
  const workflow = t.definition.workflow.name;
  t.emit({ type: "ledger.add", workflow, day: utcDay(t.at), usd: -reserved });
}
