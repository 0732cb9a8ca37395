import { completeNode, endRun } from "./flow.js";
import type { NodeStop } from "./model.js";
import { stopOutcome } from "./nodes/begin-stop.js";
import { NODE_KINDS } from "./nodes/node-kinds.js";
import type { Transition } from "./transition.js";

/**
 * Stops the active node before its work ended: by its `timeout` (the node ends `timed_out`), or
 * by the run's budget or wall clock (the run ends `failed` with `reason`). The node's kind
 * decides what to save first: a run or loop node holding a ready DevBox interrupts its running
 * command and checkpoints what is there (a commit on the run branch, pushed), a prototype does
 * the same for each variant at work, on the variant's branch; only then are DevBoxes released.
 * A checkpoint that takes over `CHECKPOINT_GRACE_MS` is given up.
 */
export function stopNode(t: Transition, stop: NodeStop, reason: string): void {
  const active = t.snapshot.active;
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
  NODE_KINDS[t.node(active.node).kind].stop(t, stop, reason);
}

/** A stopped node's checkpoint ended (or its grace ran out): the stop takes effect. */
export function finishStop(t: Transition, stop: NodeStop, reason: string): void {
  const s = t.snapshot;
  if (stop !== "timeout") {
    endRun(t, "failed", reason, s.active?.node);
    return;
  }
  // A timed-out DevBox may be in any state: the next node starts in a new one.
  NODE_KINDS[t.node(t.active.node).kind].releaseOwn?.(t, "timed-out");
  t.releaseDevBox(s.devbox);
  delete s.devbox;
  completeNode(t, "timed_out", reason);
}
