import { parseDuration } from "../workflow/duration.js";
import { completeNode, endRun, enterNode, startWork } from "./flow.js";
import {
  isFinal,
  type RunDefinition,
  type RunEvent,
  type RunSnapshot,
  type StepResult,
} from "./model.js";
import { onVariantCommand, onVariantLost, onVariantReady, variantOn } from "./prototype.js";
import { Transition } from "./transition.js";
import { onJudge } from "./judging.js";
import { onLedgerTotal, onWorkFinished } from "./work.js";
import { retry, RUN_WALL_CLOCK_TIMER, runWallClock } from "./retry.js";
import { CHECKPOINT_GRACE_MS, finishStop, stopNode } from "./stop.js";

export { DEFAULT_RUN_WALL_CLOCK, RUN_WALL_CLOCK_TIMER } from "./retry.js";

/** The snapshot of a run that has not started yet. */
export function createSnapshot(definition: RunDefinition, at: number): RunSnapshot {
  return {
    runId: definition.runId,
    status: "queued",
    startedAt: at,
    updatedAt: at,
    branch: definition.branch,
    branchPushed: false,
    visits: [],
    traversals: {},
    costUsd: 0,
    timers: {},
    seq: 1,
    evidenceSeq: 1,
  };
}

/**
 * The run engine: the next snapshot and the effects to perform, given an event. Pure: no I/O,
 * no clock, no randomness. An event that does not apply (a stale result, an answer nobody asked
 * for) leaves the snapshot as it was and says why in `refused`.
 */
export function step(
  definition: RunDefinition,
  snapshot: RunSnapshot,
  event: RunEvent,
): StepResult {
  const t = new Transition(definition, snapshot, event.at);
  const refused = apply(t, event);
  if (refused !== undefined) return { snapshot, effects: [], refused };
  return { snapshot: t.snapshot, effects: t.effects };
}

function apply(t: Transition, event: RunEvent): string | undefined {
  const s = t.snapshot;
  if (event.type === "run.retry") return retry(t, event);
  if (isFinal(s.status)) return `the run has already ended (${s.status})`;
  switch (event.type) {
    case "run.start": {
      if (s.status !== "queued") return "the run has already started";
      const entry = Object.keys(t.definition.workflow.nodes)[0];
      if (entry === undefined) throw new Error("programmer error: workflow without nodes");
      s.status = "running";
      t.record("run.started", {
        branch: s.branch,
        baseBranch: t.definition.baseBranch,
        startedBy: t.definition.startedBy,
        ...(t.definition.source === undefined ? {} : { workflowFile: t.definition.source }),
      });
      const cleaned = t.definition.briefCleaned;
      if (cleaned !== undefined && Object.values(cleaned).some((count) => count > 0)) {
        t.record("brief.cleaned", { removed: cleaned });
      }
      s.deadline = t.at + parseDuration(runWallClock(t));
      t.setTimer(RUN_WALL_CLOCK_TIMER, s.deadline);
      enterNode(t, entry);
      return undefined;
    }
    case "run.cancel":
      t.record("run.cancelled", { actor: event.actor, ...whereOf(event) });
      endRun(t, "cancelled", event.reason ?? `cancelled by ${event.actor}`);
      return undefined;
    case "devbox.ready":
      return onReady(t, event.devboxId, event.ok, event.error);
    case "devbox.lost":
      return onLost(t, event.devboxId, event.reason);
    case "command.finished": {
      const variant = variantOn(t, event.devboxId);
      if (variant !== undefined) {
        if (variant.commandId !== event.result.commandId) return "stale command result";
        onVariantCommand(t, variant, event.result);
        return undefined;
      }
      const progress = s.active?.progress;
      const current =
        progress?.kind === "exec" || progress?.kind === "loop" ? progress.commandId : undefined;
      if (current !== event.result.commandId || s.devbox?.id !== event.devboxId)
        return "stale command result";
      onWorkFinished(t, event.result);
      return undefined;
    }
    case "timer.fired":
      return onTimer(t, event.timerId);
    case "judge.verdict":
    case "judge.failed":
      return onJudge(t, event);
    case "ledger.total":
      return onLedgerTotal(t, event);
    case "approval.answer": {
      const awaiting = s.awaiting;
      if (awaiting?.kind !== "approval") return "no approval is waiting in this run";
      if (event.node !== undefined && event.node !== awaiting.node) {
        return `the waiting approval is ${awaiting.node}, not ${event.node}`;
      }
      const node = t.node(awaiting.node);
      const self = node.kind === "approval" && node.prevent_self_approval === true;
      if (self && event.actor === t.definition.startedBy) {
        return `${event.actor} started this run and ${awaiting.node} does not allow self-approval`;
      }
      t.record("approval.answered", {
        node: awaiting.node,
        decision: event.decision,
        actor: event.actor,
        ...(event.note === undefined ? {} : { note: event.note }),
        ...whereOf(event),
      });
      if (s.active?.progress.kind === "approval") t.cancelTimer(s.active.progress.timerId);
      completeNode(t, event.decision);
      return undefined;
    }
    case "run.resolve": {
      if (s.awaiting?.kind !== "lost")
        return "nothing in this run waits for resolve: it is for a lost, non-idempotent node";
      t.record("lost.resolved", {
        node: s.awaiting.node,
        outcome: event.outcome,
        actor: event.actor,
        note: event.note,
        ...whereOf(event),
      });
      completeNode(t, event.outcome, `resolved ${event.outcome} by ${event.actor}`);
      return undefined;
    }
  }
}

/** Where a person's answer was given (a comment, review or check run URL), when known. */
function whereOf(event: { where?: string }): { where?: string } {
  return event.where === undefined ? {} : { where: event.where };
}

function onReady(t: Transition, devboxId: string, ok: boolean, error?: string): string | undefined {
  const s = t.snapshot;
  const variant = variantOn(t, devboxId);
  if (variant !== undefined) {
    if (variant.phase !== "claim") return "stale DevBox";
    onVariantReady(t, variant, ok, error);
    return undefined;
  }
  if (s.devbox?.id !== devboxId || s.devbox.ready) return "stale DevBox";
  t.record("devbox.ready", { devbox: devboxId, ok, ...(error === undefined ? {} : { error }) });
  if (!ok) {
    t.releaseDevBox(s.devbox);
    delete s.devbox;
    if (s.active !== undefined)
      completeNode(t, "failed", `DevBox failed to start: ${error ?? "unknown"}`);
    return undefined;
  }
  s.devbox.ready = true;
  if (s.active?.progress.kind === "claim") startWork(t);
  return undefined;
}

function onLost(t: Transition, devboxId: string, reason: string): string | undefined {
  const s = t.snapshot;
  const variant = variantOn(t, devboxId);
  if (variant !== undefined) {
    if (variant.phase === "passed" || variant.phase === "failed" || variant.phase === "cancelled") {
      return "DevBox already released";
    }
    onVariantLost(t, variant, reason);
    return undefined;
  }
  if (s.devbox?.id !== devboxId) return "stale DevBox";
  t.releaseDevBox(s.devbox);
  delete s.devbox;
  const active = s.active;
  if (active === undefined || s.awaiting !== undefined) {
    t.record("devbox.lost", { devbox: devboxId, reason });
    return undefined;
  }
  const node = t.node(active.node);
  const visit = t.visit;
  t.record("attempt.lost", { node: active.node, attempt: visit.attempt, devbox: devboxId, reason });
  visit.outcome = "lost";
  visit.endedAt = t.at;
  visit.reason = reason;
  t.cancelTimer(active.timeoutTimer);
  const iterations = visit.iterations ?? 0;
  if (node.idempotent !== false && !active.lostRerun) {
    const since = visit.budgetSince ?? visit.startedAt;
    enterNode(t, active.node, visit.attempt + 1, { lostRerun: true, iterations, since });
    return undefined;
  }
  s.status = "awaiting_input";
  s.awaiting = { kind: "lost", node: active.node };
  active.progress = { kind: "claim" };
  active.iterationsBefore = iterations;
  return undefined;
}

function onTimer(t: Transition, timerId: string): string | undefined {
  const s = t.snapshot;
  if (!(timerId in s.timers)) return "stale timer";
  delete s.timers[timerId];
  const active = s.active;
  if (timerId === RUN_WALL_CLOCK_TIMER) {
    stopNode(t, "wall-clock", "run wall clock exceeded");
  } else if (active?.progress.kind === "approval" && active.progress.timerId === timerId) {
    const node = t.node(active.node);
    const label = node.kind === "approval" ? (node.on_timeout ?? "rejected") : "rejected";
    t.record("approval.timed_out", { node: active.node, label });
    completeNode(t, label);
  } else if (active !== undefined && active.timeoutTimer === timerId) {
    delete active.timeoutTimer;
    const pending = active.pendingOutcome;
    if (pending?.stop === undefined) {
      stopNode(t, "timeout", "node timeout reached");
    } else {
      // The stopped node's checkpoint did not finish in its grace: go on without it.
      t.record("checkpoint.abandoned", { node: active.node, graceMs: CHECKPOINT_GRACE_MS });
      finishStop(t, pending.stop, pending.reason ?? pending.outcome);
    }
  }
  return undefined;
}
