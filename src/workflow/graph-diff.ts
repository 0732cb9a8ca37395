import type { Workflow } from "./workflow.schema.js";

/** How a node or an edge changed between two versions of a workflow. */
export type Change = "added" | "removed" | "changed" | "same";

/** An edge of either version, named by its source, target and label. */
export interface DiffEdge {
  key: string;
  from: string;
  to: string;
  label?: string;
  back: boolean;
  maxTraversals?: number;
  change: Change;
}

/** Every node and edge of both versions, each marked with its change. */
export interface GraphDiff {
  nodes: { id: string; kind: string; change: Change }[];
  edges: DiffEdge[];
  /** Whether anything of the graph changed. */
  changed: boolean;
}

/**
 * The change between two versions of a workflow's graph: nodes by id (changed when any field
 * differs), edges by source, target and label (changed when their back-edge mark or cap
 * differs). Nodes and edges keep the order of the version after, removed ones follow.
 */
export function diffGraphs(before: Workflow, after: Workflow): GraphDiff {
  const nodes = [
    ...Object.entries(after.nodes).map(([id, node]) => {
      const old = before.nodes[id];
      const change: Change =
        old === undefined
          ? "added"
          : JSON.stringify(old) === JSON.stringify(node)
            ? "same"
            : "changed";
      return { id, kind: node.kind, change };
    }),
    ...Object.entries(before.nodes)
      .filter(([id]) => after.nodes[id] === undefined)
      .map(([id, node]) => ({ id, kind: node.kind, change: "removed" as const })),
  ];
  const old = new Map(before.edges.map((edge) => [edgeKey(edge), edge]));
  const now = new Set(after.edges.map(edgeKey));
  const edges: DiffEdge[] = [
    ...after.edges.map((edge) => {
      const previous = old.get(edgeKey(edge));
      const change: Change =
        previous === undefined ? "added" : sameCap(previous, edge) ? "same" : "changed";
      return edgeOf(edge, change);
    }),
    ...before.edges
      .filter((edge) => !now.has(edgeKey(edge)))
      .map((edge) => edgeOf(edge, "removed")),
  ];
  const changed = [...nodes, ...edges].some((part) => part.change !== "same");
  return { nodes, edges, changed };
}

type Edge = Workflow["edges"][number];

function edgeKey(edge: Edge): string {
  return `${edge.from}\u0000${edge.to}\u0000${edge.label ?? ""}`;
}

function sameCap(a: Edge, b: Edge): boolean {
  return (a.back ?? false) === (b.back ?? false) && a.max_traversals === b.max_traversals;
}

function edgeOf(edge: Edge, change: Change): DiffEdge {
  return {
    key: edgeKey(edge),
    from: edge.from,
    to: edge.to,
    back: edge.back === true,
    change,
    ...(edge.label === undefined ? {} : { label: edge.label }),
    ...(edge.max_traversals === undefined ? {} : { maxTraversals: edge.max_traversals }),
  };
}
