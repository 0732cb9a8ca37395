import type { Finding } from "./finding.js";
import type { GraphNode } from "./graph.js";
import type { Rule } from "./rule-context.js";
import { describe, edgePath, isContainer, nodePath } from "./rule-paths.js";

/** `impossible-label`: an edge's label is one its source node can produce. */
export const impossibleLabel: Rule = ({ graph, source }) => {
  const findings: Finding[] = [];
  for (const edge of graph.edges) {
    const node = graph.nodes.get(edge.from);
    if (node === undefined || edge.label === undefined) continue;
    const labels = graph.producibleLabels(node.id);
    if (labels === undefined || labels.has(edge.label)) continue;
    const message = isContainer(node)
      ? `${describe(node, graph)} routes on its one unlabelled edge and never produces "${edge.label}": remove the label` +
        (labels.size > 0 ? ` (its only label is ${[...labels].join(", ")})` : "")
      : `${describe(node, graph)} can never produce "${edge.label}": use one of ${[...labels].join(", ")}`;
    findings.push(source.finding("impossible-label", edgePath(edge, "label"), message));
  }
  return findings;
};

/**
 * `missing-label`, `branching-node`, `duplicate-label` and `decision-edges`: how the edges out of
 * a node are labelled.
 */
export const labelRules: Rule = ({ graph, source }) => {
  const findings: Finding[] = [];
  for (const node of graph.nodes.values()) {
    const edges = graph.outgoing(node.id);
    const labelled = node.kind === "decision" || node.kind === "approval";
    const seen = new Set<string>();
    let unlabelled = 0;
    for (const edge of edges) {
      if (edge.label === undefined) {
        unlabelled++;
        if (labelled) {
          const message = `edges out of ${describe(node, graph)} need a label saying which outcome takes them`;
          findings.push(source.finding("missing-label", edgePath(edge), message));
        } else if (isContainer(node) && unlabelled === 2) {
          const message = `${describe(node, graph)} has more than one unlabelled outgoing edge: a single token cannot take both; route with a decision node`;
          findings.push(source.finding("branching-node", edgePath(edge), message));
        }
      } else if (seen.has(edge.label)) {
        const message = `${node.id} already has an edge labelled "${edge.label}": one label leads to one place; remove this edge or give it another label`;
        findings.push(source.finding("duplicate-label", edgePath(edge, "label"), message));
      } else {
        seen.add(edge.label);
      }
    }
    if (graph.evaluator(node) === "agent" && edges.length < 2) {
      const message = `agent decision ${node.id} needs at least two outgoing labelled edges for its judge to choose between`;
      findings.push(source.finding("decision-edges", nodePath(node), message, { target: "key" }));
    }
  }
  return findings;
};

/** `decision-without-devbox`: a deterministic decision is never entered without a DevBox. */
export const decisionWithoutDevBox: Rule = ({ graph, source }) => {
  // Where a run may stand without a DevBox, and why: its entry, or after an approval.
  const origin = new Map<string, string>();
  const queue: [string, string][] = [];
  const entry = graph.entry;
  if (entry !== undefined) queue.push([entry.id, "at the run's entry"]);
  const reachable = graph.reachable();
  for (const node of graph.nodes.values()) {
    if (node.kind !== "approval" || !reachable.has(node.id)) continue;
    for (const edge of graph.outgoing(node.id))
      queue.push([edge.to, `after approval ${node.id} releases it`]);
  }
  while (queue.length > 0) {
    const [id, why] = queue.shift() as [string, string];
    const node = graph.nodes.get(id);
    if (node === undefined || origin.has(id)) continue;
    origin.set(id, why);
    if (node.kind !== "decision") continue;
    for (const edge of graph.outgoing(id)) queue.push([edge.to, why]);
  }
  const findings: Finding[] = [];
  for (const [id, why] of origin) {
    const node = graph.nodes.get(id) as GraphNode;
    if (graph.evaluator(node) !== "deterministic") continue;
    const message = `deterministic decision ${id} runs a command but may be entered with no DevBox (${why}): put a run, loop or prototype node before it, or use evaluator: status`;
    findings.push(
      source.finding("decision-without-devbox", nodePath(node), message, { target: "key" }),
    );
  }
  return findings;
};
