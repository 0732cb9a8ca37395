import { DEFAULT_MAX_TRAVERSALS, isTerminal } from "../workflow/graph.js";
import type { Edge } from "../workflow/workflow.schema.js";
import type { FeedbackItem } from "./feedback.js";
import { addFeedback, feedbackFor, feedbackLine, feedbackMark } from "./feedback-log.js";
import type { RunStatus } from "./model.js";
import { NODE_KINDS } from "./nodes/node-kinds.js";
import type { Transition } from "./transition.js";

const SUCCESS_LABELS = new Set(["succeeded", "pass", "approved"]);
const FAILURE_SOURCES: Record<string, FeedbackItem["source"]> = {
  lost: "lost",
  timed_out: "timed_out",
  exhausted: "exhausted",
};
const TERMINAL_STATUS: Record<string, RunStatus> = {
  done: "succeeded",
  failed: "failed",
  escalated: "escalated",
};

/**
 * Puts the token on `nodeId` for a new visit (or a new attempt at it); the node's kind starts
 * it. A loop's attempt carries on the `iterations` (and wall clock `since`) of the ones before.
 * A node entered again is told why: the feedback logged since its previous visit (or `told`,
 * when it has none, as a rework's first visit).
 */
export function enterNode(
  t: Transition,
  nodeId: string,
  attempt = 1,
  carry: { lostRerun: boolean; iterations: number; since?: number } = {
    lostRerun: false,
    iterations: 0,
  },
  told: FeedbackItem[] = [],
): void {
  const node = t.node(nodeId);
  const kind = NODE_KINDS[node.kind];
  const s = t.snapshot;
  const carries = kind.carriesIterations;
  const again = feedbackFor(s, nodeId);
  const feedback = again.length > 0 || s.visits.some((v) => v.node === nodeId) ? again : told;
  const fedBack = feedback.map(feedbackLine);
  s.visits.push({
    node: nodeId,
    attempt,
    startedAt: t.at,
    costUsd: 0,
    ...(carries && carry.iterations > 0 ? { iterations: carry.iterations } : {}),
    ...(carries && carry.since !== undefined ? { budgetSince: carry.since } : {}),
    feedbackMark: feedbackMark(s),
    ...(fedBack.length === 0 ? {} : { fedBack }),
  });
  s.active = {
    node: nodeId,
    visit: s.visits.length - 1,
    progress: { kind: "claim" },
    lostRerun: carry.lostRerun,
    iterationsBefore: carry.iterations,
    ...(feedback.length === 0 ? {} : { feedback }),
  };
  s.status = "running";
  delete s.awaiting;
  // Visits are numbered per node; a retry (attempt 2 on) is another attempt at the same visit.
  const visit = Math.max(1, s.visits.filter((v) => v.node === nodeId && v.attempt === 1).length);
  t.record("node.entered", { node: nodeId, visit, attempt, nodeKind: node.kind });
  if (feedback.length > 0) t.record("feedback.given", { node: nodeId, attempt, items: feedback });
  kind.enter(t);
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
  if (!SUCCESS_LABELS.has(outcome) && NODE_KINDS[t.node(active.node).kind].routing === "outcome") {
    addFeedback(t, {
      source: FAILURE_SOURCES[outcome] ?? "status",
      node: active.node,
      label: outcome,
      summary: reason === undefined ? outcome : `${outcome}: ${reason}`,
      ...(active.failureOutput === undefined ? {} : { detail: active.failureOutput }),
      ...(t.snapshot.lastSha === undefined ? {} : { headSha: t.snapshot.lastSha }),
    });
  }
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

/**
 * Moves the token along `edge`. A back-edge at its cap takes the give-up edge instead, or fails
 * the run; either way the run's reason names the edge that reached its cap (`exhausted`).
 */
function traverse(t: Transition, edge: Edge, exhausted?: string): void {
  const s = t.snapshot;
  const index = t.definition.workflow.edges.indexOf(edge);
  if (edge.back === true) {
    const cap = edge.max_traversals ?? DEFAULT_MAX_TRAVERSALS;
    const crossed = s.traversals[index] ?? 0;
    if (crossed >= cap) {
      const giveUp =
        exhausted === undefined
          ? outgoing(t, edge.from).find((e) => e.label === "exhausted")
          : undefined;
      t.record("back-edge.exhausted", { from: edge.from, to: edge.to, cap });
      const why = `${edge.from} → ${edge.to} reached its cap of ${cap}`;
      if (giveUp === undefined) {
        endRun(t, "failed", `back-edge-exhausted: ${why}`, edge.from);
        return;
      }
      const visit = s.visits.at(-1);
      if (visit !== undefined) visit.label = "exhausted";
      traverse(t, giveUp, why);
      return;
    }
    s.traversals[index] = crossed + 1;
  }
  if (isTerminal(edge.to)) {
    const status = TERMINAL_STATUS[edge.to] ?? "failed";
    const reason = `reached ${edge.to}${exhausted === undefined ? "" : `: ${exhausted}`}`;
    endRun(t, status, status === "succeeded" ? undefined : reason, edge.from);
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
  if (NODE_KINDS[t.node(nodeId).kind].routing === "label") {
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
  if (active !== undefined) NODE_KINDS[t.node(active.node).kind].releaseOwn?.(t, "run-ended");
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
