import elkBundled from "elkjs/lib/elk.bundled.js";
import type { ELK } from "elkjs/lib/elk-api.js";
import type { NodePositions } from "./workflow-files.js";

// The bundled build is CommonJS: its default export is the constructor at run time (in Node and
// in the browser bundle alike), which the package's types describe as a module instead.
const Elk = elkBundled as unknown as new () => ELK;

/** Width and height of a node box on the canvas. */
export const NODE_SIZE = { width: 170, height: 52 } as const;

/** What the layout needs of a graph: ids of boxes and the edges between them. */
export interface LayoutGraph {
  boxes: string[];
  edges: { from: string; to: string; back: boolean }[];
}

/**
 * Positions for every box by elkjs's layered layout, top to bottom. Back-edges are left out of
 * the layering (they would otherwise pull a loop's start below its end), as the validator keeps
 * forward edges acyclic.
 */
export async function autoLayout(graph: LayoutGraph): Promise<NodePositions> {
  const ids = new Set(graph.boxes);
  const laid = await new Elk().layout({
    id: "workflow",
    layoutOptions: {
      "elk.algorithm": "layered",
      "elk.direction": "DOWN",
      "elk.spacing.nodeNode": "40",
      "elk.layered.spacing.nodeNodeBetweenLayers": "60",
      "elk.padding": "[top=30,left=30,bottom=30,right=30]",
    },
    children: graph.boxes.map((id) => ({ id, ...NODE_SIZE })),
    edges: graph.edges
      .filter((edge) => !edge.back && ids.has(edge.from) && ids.has(edge.to))
      .map((edge, index) => ({ id: `e${index}`, sources: [edge.from], targets: [edge.to] })),
  });
  const positions: NodePositions = {};
  for (const child of laid.children ?? [])
    positions[child.id] = { x: child.x ?? 0, y: child.y ?? 0 };
  return positions;
}
