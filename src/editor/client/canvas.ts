import { NODE_SIZE } from "../auto-layout.js";
import { targetOf } from "../finding-targets.js";
import type { DraftEdge, DraftNode } from "../workflow-draft.js";
import type { NodePositions } from "../workflow-files.js";
import type { Finding } from "../../workflow/finding.js";
import { TERMINALS } from "../../workflow/graph.js";
import { esc } from "../../ui/view/html.js";

/** What is selected on the canvas. */
export type Selection = { kind: "node"; id: string } | { kind: "edge"; index: number } | undefined;

/** Everything the canvas draws. */
export interface CanvasModel {
  nodes: DraftNode[];
  edges: DraftEdge[];
  positions: NodePositions;
  selection: Selection;
  findings: Finding[];
  /** An edge being dragged out of a node's port, to the pointer. */
  wire?: { from: string; x: number; y: number };
}

const { width: W, height: H } = NODE_SIZE;

/**
 * The workflow as SVG: a box per node (styled by kind, numbered for keyboard connecting),
 * the terminals, edges with their labels (back-edges dashed, with their cap), and each
 * finding marked on its node or edge. Every text is escaped.
 */
export function renderCanvas(model: CanvasModel): string {
  const boxes = [...model.nodes.map((node) => node.id), ...TERMINALS];
  const at = (id: string) => model.positions[id] ?? { x: 30, y: 30 };
  const right = Math.max(900, ...boxes.map((id) => at(id).x + W + 120));
  const bottom = Math.max(600, ...boxes.map((id) => at(id).y + H + 80));
  const marks = findingsByTarget(model.findings);
  const edges = model.edges
    .map((edge) => edgeSvg(edge, model, marks.get(`e${edge.index}`)))
    .join("");
  const nodes = model.nodes
    .map((node, index) => nodeSvg(node, index + 1, model, marks.get(`n${node.id}`)))
    .join("");
  const terminals = TERMINALS.map((id) => {
    const { x, y } = at(id);
    return `<g class="terminal${selected(model, id)}" data-node="${id}" tabindex="0" role="button" aria-label="terminal ${id}"><ellipse cx="${x + W / 2}" cy="${y + H / 2}" rx="${W / 3}" ry="${H / 2 - 6}"/><text x="${x + W / 2}" y="${y + H / 2 + 5}">${id}</text></g>`;
  }).join("");
  const wire =
    model.wire === undefined
      ? ""
      : `<path class="wire" d="M${at(model.wire.from).x + W / 2},${at(model.wire.from).y + H} L${model.wire.x},${model.wire.y}"/>`;
  return `<svg xmlns="http://www.w3.org/2000/svg" class="draw" role="application" aria-label="workflow graph" width="${right}" height="${bottom}" viewBox="0 0 ${right} ${bottom}"><defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z"/></marker></defs>${edges}${terminals}${nodes}${wire}</svg>`;
}

function nodeSvg(
  node: DraftNode,
  number: number,
  model: CanvasModel,
  found: Finding[] = [],
): string {
  const { x, y } = model.positions[node.id] ?? { x: 30, y: 30 };
  const severity = found.some((f) => f.severity === "error")
    ? " has-error"
    : found.length > 0
      ? " has-warning"
      : "";
  const radius = node.kind === "loop" ? 24 : node.kind === "run" ? 10 : 3;
  const title = [`${node.id} (${node.kind})`, ...found.map((f) => `${f.rule}: ${f.message}`)].join(
    "\n",
  );
  const badge =
    found.length === 0
      ? ""
      : `<circle class="finding-badge" cx="${x + W}" cy="${y}" r="9"/><text x="${x + W}" y="${y + 4}" class="badge-count">${found.length}</text>`;
  const inner =
    node.kind === "prototype"
      ? `<rect x="${x + 4}" y="${y + 4}" width="${W - 8}" height="${H - 8}" rx="2"/>`
      : "";
  return `<g class="node kind-${esc(node.kind)}${selected(model, node.id)}${severity}" data-node="${esc(node.id)}" tabindex="0" role="button" aria-label="node ${esc(node.id)}"><title>${esc(title)}</title><rect x="${x}" y="${y}" width="${W}" height="${H}" rx="${radius}"/>${inner}<text x="${x + W / 2}" y="${y + 22}">${esc(clip(node.title ?? node.id))}</text><text x="${x + W / 2}" y="${y + 40}" class="meta">${number} · ${esc(node.kind)}</text>${badge}<circle class="port" data-port="${esc(node.id)}" cx="${x + W / 2}" cy="${y + H}" r="6"><title>drag to connect</title></circle></g>`;
}

function edgeSvg(edge: DraftEdge, model: CanvasModel, found: Finding[] = []): string {
  const from = model.positions[edge.from];
  const to = model.positions[edge.to];
  if (from === undefined || to === undefined) return "";
  const [x1, y1] = [from.x + W / 2, from.y + H / 2];
  const [x2, y2] = [to.x + W / 2, to.y + H / 2];
  const start = clipToBox(x1, y1, x2, y2);
  const end = clipToBox(x2, y2, x1, y1);
  // Back-edges bow out to the right, so a loop's way back never hides its way forward.
  const bend = edge.back ? 80 : 0;
  const cx = (start.x + end.x) / 2 + bend;
  const cy = (start.y + end.y) / 2;
  const d = `M${start.x},${start.y} Q${cx},${cy} ${end.x},${end.y}`;
  const cap = edge.back ? ` ≤${edge.maxTraversals ?? 3}×` : "";
  const text = `${edge.label ?? ""}${cap}`.trim();
  const classes = `edge${edge.back ? " back" : ""}${model.selection?.kind === "edge" && model.selection.index === edge.index ? " selected" : ""}${found.length > 0 ? " has-error" : ""}`;
  const title = [`${edge.from} → ${edge.to}`, ...found.map((f) => `${f.rule}: ${f.message}`)].join(
    "\n",
  );
  return `<g class="${classes}" data-edge="${edge.index}" tabindex="0" role="button" aria-label="edge ${esc(edge.from)} to ${esc(edge.to)}"><title>${esc(title)}</title><path class="hit" d="${d}"/><path class="line" d="${d}" marker-end="url(#arrow)"/>${text === "" ? "" : `<text x="${(start.x + end.x) / 2 + bend / 2 + 6}" y="${cy - 4}">${esc(text)}</text>`}</g>`;
}

/** Where the line from a box's centre towards a point leaves the box. */
function clipToBox(
  x: number,
  y: number,
  towardX: number,
  towardY: number,
): { x: number; y: number } {
  const dx = towardX - x;
  const dy = towardY - y;
  if (dx === 0 && dy === 0) return { x, y };
  const scale = Math.min(Math.abs(W / 2 / (dx || 1e-9)), Math.abs(H / 2 / (dy || 1e-9)));
  return { x: x + dx * Math.min(1, scale), y: y + dy * Math.min(1, scale) };
}

function findingsByTarget(findings: Finding[]): Map<string, Finding[]> {
  const marks = new Map<string, Finding[]>();
  for (const finding of findings) {
    const target = targetOf(finding);
    const key =
      target.kind === "node" ? `n${target.id}` : target.kind === "edge" ? `e${target.index}` : "w";
    marks.set(key, [...(marks.get(key) ?? []), finding]);
  }
  return marks;
}

function selected(model: CanvasModel, id: string): string {
  return model.selection?.kind === "node" && model.selection.id === id ? " selected" : "";
}

function clip(text: string): string {
  return text.length <= 22 ? text : `${text.slice(0, 21)}…`;
}
