import type { Finding } from "./finding.js";
import type { WorkflowGraph } from "./graph.js";
import type { RuleContext } from "./rule-context.js";

const record = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;

/** Nodes reachable from `from` along its outgoing edges (not `from` itself, unless in a cycle). */
function after(graph: WorkflowGraph, from: string): Set<string> {
  const seen = new Set<string>();
  const queue = graph.outgoing(from).map((edge) => edge.to);
  while (queue.length > 0) {
    const id = queue.shift() as string;
    if (seen.has(id) || !graph.nodes.has(id)) continue;
    seen.add(id);
    for (const edge of graph.outgoing(id)) queue.push(edge.to);
  }
  return seen;
}

/**
 * `output-writer`: each output name is declared by one node only (the run's state has one
 * writer per name). `output-input`: a name a node lists in `inputs` must be some node's output,
 * and that node must come before it on some path.
 */
export function outputRules({ graph, source }: RuleContext): Finding[] {
  const findings: Finding[] = [];
  const writers = new Map<string, string>();
  for (const node of graph.nodes.values()) {
    for (const name of Object.keys(record(node.fields.outputs) ?? {})) {
      const first = writers.get(name);
      if (first === undefined) {
        writers.set(name, node.id);
        continue;
      }
      const message = `output ${name} is already written by ${first}: one node writes each output; rename one of them`;
      findings.push(
        source.finding("output-writer", ["nodes", node.id, "outputs", name], message, {
          target: "key",
        }),
      );
    }
  }
  for (const node of graph.nodes.values()) {
    const inputs = node.fields.inputs;
    if (!Array.isArray(inputs)) continue;
    for (const [index, name] of inputs.entries()) {
      if (typeof name !== "string") continue;
      const writer = writers.get(name);
      const path = ["nodes", node.id, "inputs", index];
      if (writer === undefined) {
        const known = [...writers.keys()];
        const hint =
          known.length === 0 ? "no node declares outputs" : `outputs are ${known.join(", ")}`;
        const message = `input ${name} of ${node.id} is no node's output (${hint}): declare it under a node's outputs or remove it`;
        findings.push(source.finding("output-input", path, message));
      } else if (!after(graph, writer).has(node.id)) {
        const message = `input ${name} of ${node.id} is written by ${writer}, which never runs before ${node.id}: add an edge path from ${writer} to ${node.id} or read another output`;
        findings.push(source.finding("output-input", path, message));
      }
    }
  }
  return findings;
}
