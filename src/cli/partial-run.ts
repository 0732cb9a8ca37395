import type { Edge, Workflow } from "../workflow/workflow.schema.js";
import { UsageError } from "./command.js";

const TERMINALS = new Set(["done", "failed", "escalated"]);

/**
 * The workflow a `run --from NODE` or `run --only NODE` runs: from NODE, the graph as it is with
 * NODE as its entry; only NODE, NODE alone, each of its edges going to where it ends (a terminal
 * it names, else `done`). Unchanged without either.
 */
export function partOf(workflow: Workflow, from?: string, only?: string): Workflow {
  if (from !== undefined && only !== undefined) {
    throw new UsageError("give --from or --only, not both");
  }
  const node = from ?? only;
  if (node === undefined) return workflow;
  const chosen = workflow.nodes[node];
  if (!Object.hasOwn(workflow.nodes, node) || chosen === undefined) {
    const option = from !== undefined ? "--from" : "--only";
    throw new UsageError(
      `${option} ${node}: ${workflow.name} has no such node (its nodes: ${Object.keys(workflow.nodes).join(", ")})`,
    );
  }
  if (from !== undefined) {
    // The entry is the first node.
    return { ...workflow, nodes: { [node]: chosen, ...workflow.nodes } };
  }
  return { ...workflow, nodes: { [node]: chosen }, edges: edgesOfOnly(workflow.edges, node) };
}

/** NODE's edges, each to where it ends, and a plain edge to `done` when it had none. */
function edgesOfOnly(edges: Edge[], node: string): Edge[] {
  const out = edges
    .filter((edge) => edge.from === node)
    .map((edge): Edge => ({
      from: node,
      to: TERMINALS.has(edge.to) ? edge.to : "done",
      ...(edge.label === undefined ? {} : { label: edge.label }),
    }));
  return out.some((edge) => edge.label === undefined) ? out : [...out, { from: node, to: "done" }];
}
