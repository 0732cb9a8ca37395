import type { GraphEdgeView } from "./run-view.js";

/** A workflow node's box on the graph. */
export const NODE_BOX = { width: 172, height: 48 } as const;
/** A terminal's (`done`, `failed`, `escalated`) box. */
export const TERMINAL_BOX = { width: 96, height: 34 } as const;

/** Edge labels' font size in pixels, and the width of one character of it (an upper bound). */
export const LABEL_FONT = 11;
const CHAR_WIDTH = 6.6;

/** The room an edge label takes, reserved in the layout so nothing covers it. */
export function labelBox(text: string): { width: number; height: number } {
  return { width: Math.ceil(text.length * CHAR_WIDTH) + 6, height: LABEL_FONT + 5 };
}

/**
 * An edge's label as drawn: its own label, and a back-edge's crossings against its cap. The
 * layout reserves room for the cap crossed (`3/3`), the widest count the edge can show.
 */
export function edgeLabelText(
  edge: Pick<GraphEdgeView, "label" | "back" | "maxTraversals">,
  traversals: number,
): string {
  const count = edge.back ? `${traversals}/${edge.maxTraversals ?? "?"}` : "";
  return [edge.label ?? "", count].filter((part) => part !== "").join(" ");
}
