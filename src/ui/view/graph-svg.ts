import { esc } from "./html.js";
import type { GraphView } from "./run-view.js";

const WIDTH = 170;
const HEIGHT = 46;
const GAP_X = 28;
const GAP_Y = 46;
const MARGIN = 20;
/** Room on the right for back-edges, which loop around the layers. */
const BACK_LANE = 90;

interface Box {
  x: number;
  y: number;
}

/**
 * The workflow graph as SVG, drawn from the graph alone (no layout library, nothing fetched):
 * nodes in layers by their longest forward path from the entry, terminals below their sources,
 * forward edges straight, back-edges dashed arcs on the right with their traversal counts, and
 * the node the token is on highlighted. A pure function; all text escaped.
 */
export function renderGraphSvg(graph: GraphView): string {
  const layers = layerOf(graph);
  const rows = new Map<number, string[]>();
  for (const [id, layer] of layers) rows.set(layer, [...(rows.get(layer) ?? []), id]);
  const widest = Math.max(1, ...[...rows.values()].map((row) => row.length));
  const innerWidth = widest * WIDTH + (widest - 1) * GAP_X;
  const boxes = new Map<string, Box>();
  for (const [layer, row] of rows) {
    const rowWidth = row.length * WIDTH + (row.length - 1) * GAP_X;
    row.forEach((id, index) => {
      const x = MARGIN + (innerWidth - rowWidth) / 2 + index * (WIDTH + GAP_X);
      boxes.set(id, { x, y: MARGIN + layer * (HEIGHT + GAP_Y) });
    });
  }
  const width = MARGIN * 2 + innerWidth + BACK_LANE;
  const height = MARGIN * 2 + rows.size * (HEIGHT + GAP_Y) - GAP_Y;
  const edges = graph.edges.map((edge, index) => edgeSvg(edge, index, boxes, innerWidth)).join("");
  const nodes = graph.nodes
    .map((node) => {
      const box = boxes.get(node.id);
      if (box === undefined) return "";
      const counts = node.visits === 0 ? node.kind : `${node.kind} · visits ${node.visits}`;
      return `<g class="node ${esc(node.state)} kind-${esc(node.kind)}" data-node="${esc(node.id)}"><title>${esc(node.title)} (${esc(node.kind)}, ${esc(node.state)})</title><rect x="${box.x}" y="${box.y}" width="${WIDTH}" height="${HEIGHT}" rx="${node.kind === "decision" || node.kind === "approval" ? 4 : 12}"/><text x="${box.x + WIDTH / 2}" y="${box.y + 19}" class="name">${esc(clip(node.title, 22))}</text><text x="${box.x + WIDTH / 2}" y="${box.y + 36}" class="meta">${esc(counts)}</text></g>`;
    })
    .join("");
  const terminals = graph.terminals
    .map((terminal) => {
      const box = boxes.get(terminal.id);
      if (box === undefined) return "";
      const cx = box.x + WIDTH / 2;
      return `<g class="terminal${terminal.reached ? " reached" : ""}" data-node="${esc(terminal.id)}"><ellipse cx="${cx}" cy="${box.y + HEIGHT / 2}" rx="${WIDTH / 3}" ry="${HEIGHT / 2 - 4}"/><text x="${cx}" y="${box.y + HEIGHT / 2 + 5}" class="name">${esc(terminal.id)}</text></g>`;
    })
    .join("");
  return `<svg xmlns="http://www.w3.org/2000/svg" class="graph" role="img" aria-label="workflow graph" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}"><defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z"/></marker></defs>${edges}${nodes}${terminals}</svg>`;
}

function edgeSvg(
  edge: GraphView["edges"][number],
  index: number,
  boxes: Map<string, Box>,
  innerWidth: number,
): string {
  const from = boxes.get(edge.from);
  const to = boxes.get(edge.to);
  if (from === undefined || to === undefined) return "";
  const crossed = edge.traversals > 0 ? " crossed" : "";
  const count = edge.back ? ` ${edge.traversals}/${edge.maxTraversals ?? "?"}` : "";
  const label = `${edge.label ?? ""}${count}`.trim();
  if (edge.back) {
    const lane = MARGIN + innerWidth + 18 + (index % 4) * 16;
    const y1 = from.y + HEIGHT / 2;
    const y2 = to.y + HEIGHT / 2;
    const path = `M${from.x + WIDTH},${y1} C${lane},${y1} ${lane},${y2} ${to.x + WIDTH},${y2}`;
    const text =
      label === ""
        ? ""
        : `<text x="${lane - 4}" y="${(y1 + y2) / 2}" class="edge-label">${esc(label)}</text>`;
    return `<g class="edge back${crossed}"><path d="${path}" marker-end="url(#arrow)"/>${text}</g>`;
  }
  const x1 = from.x + WIDTH / 2;
  const y1 = from.y + HEIGHT;
  const x2 = to.x + WIDTH / 2;
  const y2 = to.y;
  const text =
    label === ""
      ? ""
      : `<text x="${(x1 + x2) / 2 + 4}" y="${(y1 + y2) / 2 + 4}" class="edge-label">${esc(label)}</text>`;
  return `<g class="edge${crossed}"><path d="M${x1},${y1} L${x2},${y2}" marker-end="url(#arrow)"/>${text}</g>`;
}

/** Layers by the longest forward path from the entry; terminals one below their lowest source. */
function layerOf(graph: GraphView): Map<string, number> {
  const layers = new Map<string, number>();
  const forward = graph.edges.filter((edge) => !edge.back);
  const ids = graph.nodes.map((node) => node.id);
  for (const id of ids) layers.set(id, 0);
  // Forward edges are acyclic (the validator refuses forward cycles): relaxing |V| times settles.
  for (let round = 0; round < ids.length; round++) {
    let changed = false;
    for (const edge of forward) {
      const next = (layers.get(edge.from) ?? 0) + 1;
      if (layers.has(edge.to) && next > (layers.get(edge.to) ?? 0) && ids.includes(edge.to)) {
        layers.set(edge.to, next);
        changed = true;
      }
    }
    if (!changed) break;
  }
  const deepest = Math.max(0, ...layers.values());
  for (const terminal of graph.terminals) {
    const sources = graph.edges.filter((edge) => edge.to === terminal.id);
    const below = Math.max(-1, ...sources.map((edge) => layers.get(edge.from) ?? 0)) + 1;
    layers.set(terminal.id, sources.length === 0 ? deepest + 1 : below);
  }
  return layers;
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
