import { containerOutcomes, type GraphEdge, type GraphNode, type WorkflowGraph } from "./graph.js";

/** Where a finding about `node` (or one of its fields) points. */
export const nodePath = (node: GraphNode, ...rest: (string | number)[]) => [
  "nodes",
  node.id,
  ...rest,
];

/** Where a finding about `edge` points: at `field` when the edge writes it, else the edge. */
export const edgePath = (edge: GraphEdge, field?: string) =>
  field === undefined || !(field in edge.fields)
    ? ["edges", edge.index]
    : ["edges", edge.index, field];

/** A node as findings name it: "<evaluator> decision <id>", or "<kind> <id>". */
export const describe = (node: GraphNode, graph: WorkflowGraph) => {
  const evaluator = graph.evaluator(node);
  return evaluator === undefined
    ? `${node.kind ?? "node"} ${node.id}`
    : `${evaluator} decision ${node.id}`;
};

/** Does the node hold a token while it works (run, loop, prototype), rather than route it? */
export const isContainer = (node: GraphNode) => containerOutcomes(node.kind) !== undefined;
