import { parseDuration } from "../workflow/duration.js";
import { DEFAULT_MAX_TRAVERSALS, isTerminal } from "../workflow/graph.js";
import type { Edge } from "../workflow/workflow.schema.js";
import { agentCommand } from "./prompts.js";
import { startPrototype } from "./prototype.js";
import type { NodeProgress, RunStatus } from "./model.js";
import type { Transition } from "./transition.js";
import { decisionJudgeRequest } from "./judging.js";
import { beginIteration } from "./work.js";

/** Default window of an approval. */
const DEFAULT_APPROVAL_TIMEOUT = "72h";
const SUCCESS_LABELS = new Set(["succeeded", "pass", "approved"]);
const TERMINAL_STATUS: Record<string, RunStatus> = {
  done: "succeeded",
  failed: "failed",
  escalated: "escalated",
};

/** Puts the token on `nodeId` for a new visit (or a new attempt at it). */
export function enterNode(
  t: Transition,
  nodeId: string,
  attempt = 1,
  carry: { lostRerun: boolean; iterations: number; since?: number } = {
    lostRerun: false,
    iterations: 0,
  },
): void {
  const node = t.node(nodeId);
  const s = t.snapshot;
  s.visits.push({
    node: nodeId,
    attempt,
    startedAt: t.at,
    costUsd: 0,
    ...(node.kind === "loop" && carry.iterations > 0 ? { iterations: carry.iterations } : {}),
    ...(node.kind === "loop" && carry.since !== undefined ? { budgetSince: carry.since } : {}),
  });
  s.active = {
    node: nodeId,
    visit: s.visits.length - 1,
    progress: { kind: "claim" },
    lostRerun: carry.lostRerun,
    iterationsBefore: carry.iterations,
  };
  s.status = "running";
  delete s.awaiting;
  t.record("node.entered", { node: nodeId, attempt, nodeKind: node.kind });
  const container = node.kind === "run" || node.kind === "loop" || node.kind === "prototype";
  if (container && node.timeout !== undefined) {
    const timerId = `timeout:${s.active.visit}:${attempt}`;
    s.active.timeoutTimer = timerId;
    t.setTimer(timerId, t.at + parseDuration(node.timeout));
  }
  switch (node.kind) {
    case "prototype":
      t.releaseDevBox(s.devbox);
      delete s.devbox;
      startPrototype(t);
      return;
    case "approval": {
      t.releaseDevBox(s.devbox);
      delete s.devbox;
      const deadline = t.at + parseDuration(node.timeout ?? DEFAULT_APPROVAL_TIMEOUT);
      const timerId = `approval:${s.active.visit}`;
      s.active.progress = { kind: "approval", timerId, deadline };
      s.status = "awaiting_input";
      s.awaiting = { kind: "approval", node: nodeId, deadline };
      t.setTimer(timerId, deadline);
      t.record("approval.requested", { node: nodeId, deadline, message: node.message });
      return;
    }
    case "decision":
      if (node.evaluator === "status") {
        const label = s.lastOutcome ?? "default";
        t.record("decision.evaluated", { node: nodeId, evaluator: "status", verdict: label });
        completeNode(t, label);
        return;
      }
      if (node.evaluator === "agent") {
        const requestId = `j${s.seq}`;
        s.active.progress = { kind: "judge", requestId };
        t.emit(decisionJudgeRequest(t.definition, s, nodeId, requestId));
        return;
      }
      break;
  }
  ensureDevBox(t);
}

/** Claims a DevBox for the active node unless the run holds a ready one; then starts work. */
export function ensureDevBox(t: Transition): void {
  const s = t.snapshot;
  if (s.devbox?.ready === true) {
    startWork(t);
    return;
  }
  if (s.devbox === undefined) s.devbox = t.claimDevBox(s.branch);
  t.active.progress = { kind: "claim" };
}

/** Starts the active run, loop or deterministic decision in the run's ready DevBox. */
export function startWork(t: Transition): void {
  const active = t.active;
  const node = t.node(active.node);
  const devbox = t.snapshot.devbox;
  if (devbox === undefined) throw new Error("programmer error: no DevBox");
  let progress: NodeProgress;
  if (node.kind === "loop") {
    beginIteration(t, node, active.iterationsBefore + 1, []);
    return;
  } else if (node.kind === "run" && node.run === undefined && node.agent !== undefined) {
    const prompt = `${node.prompt ?? ""}\n\nThe requirement is in the file named by CLUSTERCODE_BRIEF_FILE.\n`;
    const commandId = t.dispatch(devbox.id, agentCommand(t.definition, node.agent, prompt));
    progress = { kind: "exec", commandId, step: "main" };
  } else if ((node.kind === "run" || node.kind === "decision") && node.run !== undefined) {
    const commandId = t.dispatch(devbox.id, { type: "script", script: node.run });
    progress = { kind: "exec", commandId, step: "main" };
  } else {
    throw new Error(`programmer error: ${node.kind} node ${active.node} has no work`);
  }
  active.progress = progress;
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
    completeNode(t, outcome, reason);
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

/** Closes the active visit with `outcome` and moves the token along the matching edge. */
export function completeNode(t: Transition, outcome: string, reason?: string): void {
  const s = t.snapshot;
  const active = t.active;
  const visit = t.visit;
  visit.endedAt = t.at;
  visit.outcome = outcome;
  if (reason !== undefined) visit.reason = reason;
  t.cancelTimer(active.timeoutTimer);
  const edge = chooseEdge(t, active.node, outcome);
  if (edge !== undefined && edge.label !== undefined) visit.label = edge.label;
  t.record("node.finished", {
    node: active.node,
    attempt: visit.attempt,
    outcome,
    ...(reason === undefined ? {} : { reason }),
    ...(edge === undefined ? {} : { to: edge.to, label: edge.label }),
  });
  s.lastOutcome = outcome;
  delete s.active;
  if (edge === undefined) {
    const success = SUCCESS_LABELS.has(outcome);
    endRun(
      t,
      success ? "succeeded" : "failed",
      success ? undefined : `${visit.node} ${outcome}`,
      visit.node,
    );
    return;
  }
  traverse(t, edge);
}

function traverse(t: Transition, edge: Edge, exhaustedAlready = false): void {
  const s = t.snapshot;
  const index = t.definition.workflow.edges.indexOf(edge);
  if (edge.back === true) {
    const cap = edge.max_traversals ?? DEFAULT_MAX_TRAVERSALS;
    const crossed = s.traversals[index] ?? 0;
    if (crossed >= cap) {
      const giveUp = exhaustedAlready
        ? undefined
        : outgoing(t, edge.from).find((e) => e.label === "exhausted");
      t.record("back-edge.exhausted", { from: edge.from, to: edge.to, cap });
      if (giveUp === undefined) {
        endRun(t, "failed", "back-edge-exhausted", edge.from);
        return;
      }
      const visit = s.visits.at(-1);
      if (visit !== undefined) visit.label = "exhausted";
      traverse(t, giveUp, true);
      return;
    }
    s.traversals[index] = crossed + 1;
  }
  if (isTerminal(edge.to)) {
    const status = TERMINAL_STATUS[edge.to] ?? "failed";
    endRun(t, status, status === "succeeded" ? undefined : `reached ${edge.to}`, edge.from);
    return;
  }
  enterNode(t, edge.to);
}

/**
 * The edge an outcome takes. Container nodes take their unlabelled edge on success, and on any
 * outcome when it leads to a status decision (which exists to route on outcomes); `exhausted`
 * takes the give-up edge. Decisions and approvals take the edge of their label, else `default`.
 */
function chooseEdge(t: Transition, nodeId: string, outcome: string): Edge | undefined {
  const edges = outgoing(t, nodeId);
  const kind = t.node(nodeId).kind;
  if (kind === "decision" || kind === "approval") {
    return (
      edges.find((edge) => edge.label === outcome) ?? edges.find((edge) => edge.label === "default")
    );
  }
  if (outcome === "exhausted") {
    const giveUp = edges.find((edge) => edge.label === "exhausted");
    if (giveUp !== undefined) return giveUp;
  }
  const next = edges.find((edge) => edge.label === undefined);
  if (next === undefined) return undefined;
  if (outcome === "succeeded") return next;
  const target = t.definition.workflow.nodes[next.to];
  return target?.kind === "decision" && target.evaluator === "status" ? next : undefined;
}

function outgoing(t: Transition, nodeId: string): Edge[] {
  return t.definition.workflow.edges.filter((edge) => edge.from === nodeId);
}

/** Ends the run: every DevBox released, every timer cancelled. */
export function endRun(t: Transition, status: RunStatus, reason?: string, atNode?: string): void {
  const s = t.snapshot;
  const active = s.active;
  if (active?.progress.kind === "prototype") {
    for (const variant of active.progress.variants) {
      if (variant.devbox.id !== s.devbox?.id) t.releaseDevBox(variant.devbox);
    }
  }
  t.releaseDevBox(s.devbox);
  delete s.devbox;
  for (const timerId of Object.keys(s.timers)) t.cancelTimer(timerId);
  if (active !== undefined) {
    const visit = s.visits[active.visit];
    if (visit !== undefined && visit.endedAt === undefined) {
      visit.endedAt = t.at;
      visit.outcome = status === "cancelled" ? "cancelled" : (visit.outcome ?? status);
    }
  }
  delete s.active;
  delete s.awaiting;
  s.status = status;
  if (reason === undefined) delete s.reason;
  else s.reason = reason;
  if (status === "failed" && atNode !== undefined) s.failedNode = retryTarget(t, atNode);
  t.record("run.finished", { status, ...(reason === undefined ? {} : { reason }) });
}

/**
 * Where a retry re-enters: the node the run stopped at, except a status decision, which only
 * repeats its predecessor's outcome: the retry re-runs that predecessor.
 */
function retryTarget(t: Transition, nodeId: string): string {
  const node = t.definition.workflow.nodes[nodeId];
  if (node?.kind !== "decision" || node.evaluator !== "status") return nodeId;
  const visits = t.snapshot.visits;
  const index = visits.findLastIndex((visit) => visit.node === nodeId);
  return visits[index - 1]?.node ?? nodeId;
}
