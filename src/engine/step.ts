import { parseDuration } from "../workflow/duration.js";
import { completeNode, endRun, enterNode } from "./flow.js";
import {
  isFinal,
  type RunDefinition,
  type RunEvent,
  type RunSnapshot,
  type StepResult,
} from "./model.js";
import { addFeedback } from "./feedback-log.js";
import { heldSlot, reclaimStale, startedStale } from "./devbox-sha.js";
import { answerApproval } from "./nodes/approval.js";
import { CHECKPOINT_GRACE_MS } from "./nodes/begin-stop.js";
import type { NodeBehaviour } from "./nodes/node-behaviour.js";
import { NODE_KINDS } from "./nodes/node-kinds.js";
import { Transition, type RunMoves } from "./transition.js";
import { retry, RUN_WALL_CLOCK_TIMER, runWallClock } from "./retry.js";
import { rework } from "./rework.js";
import { finishStop, stopNode } from "./stop.js";

export { DEFAULT_RUN_WALL_CLOCK, RUN_WALL_CLOCK_TIMER } from "./retry.js";

/** The run-level moves node kinds make, handed to each transition. */
const MOVES: RunMoves = { completeNode, endRun, stopNode, finishStop };

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
 * for) leaves the snapshot as it was and says why in `refused`; a refused `run.rework` also
 * records why (`rework.refused` evidence), which is all it changes.
 */
export function step(
  definition: RunDefinition,
  snapshot: RunSnapshot,
  event: RunEvent,
): StepResult {
  const t = new Transition(definition, snapshot, event.at, MOVES);
  const refused = apply(t, event);
  // A refused rework keeps its `rework.refused` evidence: the reason is the reply.
  if (refused !== undefined && event.type === "run.rework") {
    return { snapshot: t.snapshot, effects: t.effects, refused };
  }
  if (refused !== undefined) return { snapshot, effects: [], refused };
  return { snapshot: t.snapshot, effects: t.effects };
}

/**
 * A DevBox started (or could not): what it reports is kept on the DevBox the run holds. One that
 * started on another commit than the run's last checkpoint is refused and claimed again.
 */
function devboxReady(
  t: Transition,
  event: Extract<RunEvent, { type: "devbox.ready" }>,
): string | undefined {
  const s = t.snapshot;
  const held = t.heldDevBox(event.devboxId);
  if (held !== undefined && !held.ready && event.harness !== undefined) {
    held.harness = event.harness;
  }
  // Before any checkpoint, a DevBox starts from the base branch: its head is the base.
  if (event.ok && event.sha !== undefined && !s.branchPushed && s.baseSha === undefined) {
    if (held !== undefined && !held.ready) s.baseSha = event.sha;
  }
  if (held !== undefined && !held.ready && event.isolation !== undefined) {
    held.isolation = event.isolation;
  }
  const slot = held === undefined ? undefined : heldSlot(t, held);
  if (held !== undefined && slot !== undefined && startedStale(held, event)) {
    // Not the run's last checkpoint: another DevBox is claimed, or the start fails for good.
    const next = reclaimStale(t, held, event);
    if ("error" in next) return onReady(t, event.devboxId, false, next.error);
    slot(next.devbox);
    return undefined;
  }
  return onReady(t, event.devboxId, event.ok, event.error);
}

/** A command's result goes to the active node's kind; its proxied cost is counted. */
function commandFinished(
  t: Transition,
  event: Extract<RunEvent, { type: "command.finished" }>,
): string | undefined {
  const s = t.snapshot;
  const before = s.costUsd;
  const kind = activeKind(t);
  const ignored =
    kind === undefined
      ? "stale command result"
      : kind.onCommandFinished(t, event.devboxId, event.result);
  countProxied(s, event.result.proxiedCostUsd, s.costUsd > before);
  return ignored;
}

function apply(t: Transition, event: RunEvent): string | undefined {
  const s = t.snapshot;
  if (event.type === "run.retry") return retry(t, event);
  if (event.type === "run.observed") return observe(t, event);
  if (event.type === "push.refused") {
    const { devboxId, ref, reason } = event;
    t.record("push.refused", { devbox: devboxId, ref, reason });
    return undefined;
  }
  if (event.type === "run.rework") return rework(t, event);
  if (isFinal(s.status)) return `the run has already ended (${s.status})`;
  switch (event.type) {
    case "run.start":
      return startRun(t);
    case "run.cancel":
      t.record("run.cancelled", { actor: event.actor, ...whereOf(event) });
      endRun(t, "cancelled", event.reason ?? `cancelled by ${event.actor}`);
      return undefined;
    case "run.abort":
      t.record("run.aborted", { reason: event.reason });
      endRun(t, "failed", event.reason, s.active?.node);
      return undefined;
    case "devbox.ready":
      return devboxReady(t, event);
    case "devbox.lost":
      return onLost(t, event.devboxId, event.reason);
    case "command.finished":
      return commandFinished(t, event);
    case "timer.fired":
      return onTimer(t, event.timerId);
    case "judge.verdict":
    case "judge.failed": {
      const onJudged = activeKind(t)?.onJudged;
      return onJudged === undefined ? "stale verdict" : onJudged(t, event);
    }
    case "ledger.total": {
      const onLedgerTotal = activeKind(t)?.onLedgerTotal;
      return onLedgerTotal === undefined ? "stale ledger answer" : onLedgerTotal(t, event);
    }
    case "approval.answer":
      return answerApproval(t, event);
    case "run.resolve":
      return resolveLost(t, event);
  }
}

/**
 * Proxied spend is money spent whatever the node made of the result: the run's cost counts it
 * even when the node did not (a stale result), and `proxiedUsd` tells the hub it is counted.
 */
function countProxied(s: RunSnapshot, proxied: number | undefined, added: boolean): void {
  if (proxied === undefined || proxied <= 0) return;
  if (!added) s.costUsd += proxied;
  s.proxiedUsd = (s.proxiedUsd ?? 0) + proxied;
}

/** Starts a queued run: its wall clock begins and the token enters the first node. */
function startRun(t: Transition): string | undefined {
  const s = t.snapshot;
  if (s.status !== "queued") return "the run has already started";
  const entry = Object.keys(t.definition.workflow.nodes)[0];
  if (entry === undefined) throw new Error("programmer error: workflow without nodes");
  s.status = "running";
  t.record("run.started", {
    branch: s.branch,
    baseBranch: t.definition.baseBranch,
    startedBy: t.definition.startedBy,
    ...(t.definition.source === undefined
      ? {}
      : { workflowFile: t.definition.source, graphVersion: t.definition.source.sha }),
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

/** A person settled a lost, non-idempotent node's outcome: the run routes on it. */
function resolveLost(
  t: Transition,
  event: Extract<RunEvent, { type: "run.resolve" }>,
): string | undefined {
  const s = t.snapshot;
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

/** The behaviour of the active node's kind, when a node is active. */
function activeKind(t: Transition): NodeBehaviour | undefined {
  const active = t.snapshot.active;
  return active === undefined ? undefined : NODE_KINDS[t.node(active.node).kind];
}

/** Where a person's answer was given (a comment, review or check run URL), when known. */
function whereOf(event: { where?: string }): { where?: string } {
  return event.where === undefined ? {} : { where: event.where };
}

function onReady(t: Transition, devboxId: string, ok: boolean, error?: string): string | undefined {
  const s = t.snapshot;
  const kind = activeKind(t);
  if (kind?.onOwnDevBoxReady !== undefined) return kind.onOwnDevBoxReady(t, devboxId, ok, error);
  if (s.devbox?.id !== devboxId || s.devbox.ready) return "stale DevBox";
  const { harness, isolation } = s.devbox;
  t.record("devbox.ready", {
    devbox: devboxId,
    ok,
    ...(error === undefined ? {} : { error }),
    ...(harness === undefined ? {} : { harness }),
    ...(isolation === undefined ? {} : { isolation }),
  });
  if (!ok) {
    t.releaseDevBox(s.devbox);
    delete s.devbox;
    if (s.active !== undefined)
      completeNode(t, "failed", `DevBox failed to start: ${error ?? "unknown"}`);
    return undefined;
  }
  s.devbox.ready = true;
  if (s.active?.progress.kind !== "claim") return undefined;
  if (kind?.start === undefined) throw new Error(`programmer error: ${s.active.node} has no work`);
  kind.start(t);
  return undefined;
}

function onLost(t: Transition, devboxId: string, reason: string): string | undefined {
  const s = t.snapshot;
  const kind = activeKind(t);
  if (kind?.onOwnDevBoxLost !== undefined) return kind.onOwnDevBoxLost(t, devboxId, reason);
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
  addFeedback(t, { source: "lost", node: active.node, label: "lost", summary: reason });
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
    return undefined;
  }
  // A timer of the node's own (an approval's window) is its kind's to handle.
  if (activeKind(t)?.onTimer?.(t, timerId) === true) return undefined;
  if (active !== undefined && active.timeoutTimer === timerId) {
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

/** Records what happened to the run's work on GitHub; the run itself does not move. */
function observe(t: Transition, event: Extract<RunEvent, { type: "run.observed" }>): undefined {
  const { what, ...detail } = event;
  const facts = Object.fromEntries(
    Object.entries(detail).filter(
      ([key, value]) => key !== "type" && key !== "at" && value !== undefined,
    ),
  );
  t.record(what, facts);
  return undefined;
}
