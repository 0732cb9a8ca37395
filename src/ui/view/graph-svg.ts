import { LABEL_FONT, edgeLabelText } from "./graph-geometry.js";
import { duration, esc } from "./html.js";
import type { GraphEdgeView, GraphLayout, GraphNodeView, GraphView } from "./run-view.js";

/** What a node's state is called under its title. */
const STATE_WORDS: Record<GraphNodeView["state"], string> = {
  succeeded: "succeeded",
  failed: "failed",
  cancelled: "cancelled",
  running: "running",
  waiting: "waiting",
  "not-reached": "not reached",
};

/**
 * The workflow graph as SVG from its server-made layout (elkjs): each node coloured by its state
 * (succeeded, failed, running, waiting, not reached) with its visits and time, the path the run
 * took drawn heavier, back-edges dashed with their crossings against their cap, and the
 * terminal the run ended at marked. A pure function; all text escaped.
 */
export function renderGraphSvg(graph: GraphView): string {
  const { layout } = graph;
  const edges = graph.edges.map((edge, index) => edgeSvg(edge, layout.edges[index])).join("");
  const nodes = graph.nodes.map((node) => nodeSvg(node, layout)).join("");
  const terminals = graph.terminals
    .map((terminal) => {
      const box = layout.boxes[terminal.id];
      if (box === undefined) return "";
      const cx = box.x + box.width / 2;
      const cy = box.y + box.height / 2;
      return `<g class="terminal${terminal.reached ? " reached" : ""}" data-node="${esc(terminal.id)}"><ellipse cx="${cx}" cy="${cy}" rx="${box.width / 2}" ry="${box.height / 2}"/><text x="${cx}" y="${cy + 5}" class="name">${esc(terminal.id)}</text></g>`;
    })
    .join("");
  return `<svg xmlns="http://www.w3.org/2000/svg" class="graph" role="img" aria-label="workflow graph" viewBox="0 0 ${layout.width} ${layout.height}" width="${layout.width}" height="${layout.height}"><defs>${marker("arrow")}${marker("arrow-taken")}</defs>${edges}${nodes}${terminals}</svg>`;
}

function marker(id: string): string {
  return `<marker id="${id}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z"/></marker>`;
}

function nodeSvg(node: GraphNodeView, layout: GraphLayout): string {
  const box = layout.boxes[node.id];
  if (box === undefined) return "";
  const meta = [
    node.kind,
    STATE_WORDS[node.state],
    node.visits > 1 ? `×${node.visits}` : "",
    node.durationMs > 0 ? duration(node.durationMs) : "",
  ].filter((part) => part !== "");
  const cx = box.x + box.width / 2;
  const rounded = node.kind === "decision" || node.kind === "approval" ? 4 : 12;
  return `<g class="node state-${esc(node.state)} kind-${esc(node.kind)}" data-node="${esc(node.id)}" data-state="${esc(node.state)}"><title>${esc(node.title)} (${esc(node.kind)}, ${esc(STATE_WORDS[node.state])})</title><rect x="${box.x}" y="${box.y}" width="${box.width}" height="${box.height}" rx="${rounded}"/><text x="${cx}" y="${box.y + 20}" class="name">${esc(clip(node.title, 22))}</text><text x="${cx}" y="${box.y + 37}" class="meta">${esc(clip(meta.join(" · "), 30))}</text></g>`;
}

function edgeSvg(edge: GraphEdgeView, route: GraphLayout["edges"][number] | undefined): string {
  if (route === undefined || route.points.length < 2) return "";
  const { taken } = edge;
  const path = route.points.map((at, index) => `${index === 0 ? "M" : "L"}${at.x},${at.y}`);
  const text = edgeLabelText(edge, edge.traversals);
  const label =
    text === "" || route.label === undefined
      ? ""
      : `<text x="${route.label.x + 3}" y="${route.label.y + LABEL_FONT + 1}" class="edge-label">${esc(text)}</text>`;
  const classes = ["edge", edge.back ? "back" : "", taken ? "taken" : ""].filter(Boolean);
  return `<g class="${classes.join(" ")}" data-from="${esc(edge.from)}" data-to="${esc(edge.to)}"><path d="${path.join(" ")}" marker-end="url(#${taken ? "arrow-taken" : "arrow"})"/>${label}</g>`;
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
