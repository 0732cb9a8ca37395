import type { NodeStop } from "../model.js";
import type { Transition } from "../transition.js";

/** How long a stopped node's checkpoint may take before its DevBox is released without one. */
export const CHECKPOINT_GRACE_MS = 10 * 60_000;

/** How a stop names itself in the checkpoint's commit message. */
export const STOP_WORDS: Record<NodeStop, string> = {
  timeout: "timed out",
  budget: "run budget exceeded",
  "wall-clock": "run wall clock exceeded",
};

/** The outcome a stop gives the node: `timed_out` for its own timeout, else `failed`. */
export function stopOutcome(stop: NodeStop, reason: string): { outcome: string; reason: string } {
  return { outcome: stop === "timeout" ? "timed_out" : "failed", reason };
}

/** Records the stop and gives the checkpoints {@link CHECKPOINT_GRACE_MS} to finish. */
export function beginStop(
  t: Transition,
  stop: NodeStop,
  reason: string,
  interrupted?: string,
): void {
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
