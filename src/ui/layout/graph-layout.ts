import elkjs, { type ElkExtendedEdge, type ElkNode } from "elkjs/lib/elk.bundled.js";
import type { GraphLayout, GraphView, LayoutPoint } from "../view/run-view.js";
import { NODE_BOX, TERMINAL_BOX, edgeLabelText, labelBox } from "../view/graph-geometry.js";

// elkjs is CommonJS: its constructor is both the module and the module's `default`.
const elk = new elkjs.default();

/** ELK's layered layout, top to bottom, in the file's order, with room for edge labels. */
const OPTIONS: Record<string, string> = {
  "elk.algorithm": "layered",
  "elk.direction": "DOWN",
  "elk.edgeRouting": "ORTHOGONAL",
  "elk.edgeLabels.placement": "CENTER",
  "elk.layered.edgeLabels.sideSelection": "SMART_DOWN",
  "elk.layered.considerModelOrder.strategy": "NODES_AND_EDGES",
  "elk.layered.spacing.nodeNodeBetweenLayers": "36",
  "elk.layered.spacing.edgeNodeBetweenLayers": "18",
  "elk.spacing.nodeNode": "32",
  "elk.spacing.edgeLabel": "4",
  "elk.spacing.edgeEdge": "14",
  "elk.padding": "[top=16,left=16,bottom=16,right=16]",
};

/** Layouts by the graph's shape: a workflow's graph is laid out once per process. */
const cache = new Map<string, Promise<GraphLayout>>();
const CACHE_SIZE = 100;

/**
 * Lays the workflow graph out with ELK (elkjs): nodes in layers, edges routed around nodes, and
 * labels given their own room so none overlaps another or hides behind a node. Back-edges are
 * laid out reversed, so the forward flow reads top to bottom, and drawn back in their direction.
 * The layout depends on the graph's shape only, not on where a run stands.
 */
export function layoutGraph(graph: Omit<GraphView, "layout">): Promise<GraphLayout> {
  const key = JSON.stringify([
    graph.nodes.map((node) => node.id),
    graph.terminals.map((terminal) => terminal.id),
    graph.edges.map((edge) => [edge.from, edge.to, edge.back, edge.label, edge.maxTraversals]),
  ]);
  const known = cache.get(key);
  if (known !== undefined) return known;
  const made = run(graph);
  if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value ?? "");
  cache.set(key, made);
  made.catch(() => cache.delete(key));
  return made;
}

async function run(graph: Omit<GraphView, "layout">): Promise<GraphLayout> {
  const children: ElkNode[] = [
    ...graph.nodes.map((node) => ({ id: node.id, ...NODE_BOX })),
    ...graph.terminals.map((terminal) => ({ id: terminal.id, ...TERMINAL_BOX })),
  ];
  const edges: ElkExtendedEdge[] = graph.edges.map((edge, index) => {
    const text = edgeLabelText(edge, edge.maxTraversals ?? 0);
    return {
      id: `e${index}`,
      sources: [edge.back ? edge.to : edge.from],
      targets: [edge.back ? edge.from : edge.to],
      labels: text === "" ? [] : [{ text, ...labelBox(text) }],
    };
  });
  const root: ElkNode = { id: "root", layoutOptions: OPTIONS, children, edges };
  const laid: ElkNode = await elk.layout(root);
  const boxes: GraphLayout["boxes"] = {};
  for (const child of laid.children ?? []) {
    boxes[child.id] = {
      x: child.x ?? 0,
      y: child.y ?? 0,
      width: child.width ?? 0,
      height: child.height ?? 0,
    };
  }
  return {
    width: Math.ceil(laid.width ?? 0),
    height: Math.ceil(laid.height ?? 0),
    boxes,
    edges: (laid.edges ?? []).map((edge, index) => {
      const section = edge.sections?.[0];
      const route: LayoutPoint[] =
        section === undefined
          ? []
          : [section.startPoint, ...(section.bendPoints ?? []), section.endPoint].map(point);
      const label = edge.labels?.[0];
      return {
        points: graph.edges[index]?.back === true ? route.reverse() : route,
        ...(label === undefined ? {} : { label: point({ x: label.x ?? 0, y: label.y ?? 0 }) }),
      };
    }),
  };
}

function point(at: { x: number; y: number }): LayoutPoint {
  return { x: Math.round(at.x * 10) / 10, y: Math.round(at.y * 10) / 10 };
}
