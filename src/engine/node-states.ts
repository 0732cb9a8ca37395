import type { Workflow } from "../workflow/workflow.schema.js";
import type { RunSnapshot, Visit } from "./model.js";
import { NODE_KINDS } from "./nodes/node-kinds.js";

/**
 * Where a node stands in a run, as the run pages and the status comment colour it: its latest
 * visit's result, the token on it (running, or waiting on people or capacity), or not reached.
 */
export type NodeState =
  "succeeded" | "failed" | "cancelled" | "running" | "waiting" | "not-reached";

/** How one visit ended, or where it stands while the token is on it. */
export function visitState(workflow: Workflow, state: RunSnapshot, visit: Visit): NodeState {
  const { outcome } = visit;
  if (outcome === undefined) {
    if (state.active === undefined || state.visits[state.active.visit] !== visit)
      return "cancelled";
    return state.awaiting !== undefined || state.status !== "running" ? "waiting" : "running";
  }
  if (outcome === "cancelled") return "cancelled";
  const kind = workflow.nodes[visit.node]?.kind;
  // A decision or approval that routed on a label (`failed` among them) decided: its success.
  if (kind !== undefined && NODE_KINDS[kind].routing === "label" && visit.label !== undefined)
    return "succeeded";
  return outcome === "succeeded" ? "succeeded" : "failed";
}

/** Every node's state: that of its latest visit, or `not-reached`. */
export function nodeStates(workflow: Workflow, state: RunSnapshot): Record<string, NodeState> {
  const states: Record<string, NodeState> = {};
  for (const id of Object.keys(workflow.nodes)) states[id] = "not-reached";
  for (const visit of state.visits) states[visit.node] = visitState(workflow, state, visit);
  return states;
}

/**
 * The edges the run took (by index in `edges`), read from its visits in order: each visit to the
 * next by the edge its outcome chose, and the last to the terminal the run ended at.
 */
export function takenEdges(workflow: Workflow, state: RunSnapshot): Set<number> {
  const taken = new Set<number>();
  const ending: Partial<Record<RunSnapshot["status"], string>> = {
    succeeded: "done",
    failed: "failed",
    escalated: "escalated",
  };
  state.visits.forEach((visit, index) => {
    const to = state.visits[index + 1]?.node ?? ending[state.status];
    if (to === undefined || visit.outcome === undefined) return;
    const candidates = workflow.edges
      .map((edge, at) => ({ edge, at }))
      .filter(({ edge }) => edge.from === visit.node && edge.to === to);
    const chosen =
      candidates.find(({ edge }) => edge.label === (visit.label ?? visit.outcome)) ??
      candidates.find(({ edge }) => edge.label === undefined) ??
      candidates[0];
    if (chosen !== undefined) taken.add(chosen.at);
  });
  return taken;
}
