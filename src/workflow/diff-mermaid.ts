import type { GraphDiff } from "./graph-diff.js";
import { isTerminal } from "./graph.js";

const STYLES = [
  "  classDef added fill:#dafbe1,stroke:#1a7f37,stroke-width:3px",
  "  classDef removed fill:#ffebe9,stroke:#cf222e,stroke-width:3px,stroke-dasharray:5 3",
  "  classDef changed fill:#fff8c5,stroke:#9a6700,stroke-width:3px",
];
const EDGE_COLOURS = { added: "#1a7f37", removed: "#cf222e", changed: "#9a6700" } as const;

/**
 * The graph's change as one Mermaid flowchart (GitHub draws it as a picture in a comment or a
 * check run): every node and edge of both versions (or of one side), added ones green, removed ones red and
 * dashed, changed ones amber, each with a `+`, `−` or `~` before its name for readers without
 * colour.
 */
export function renderDiffMermaid(
  whole: GraphDiff,
  side: "before" | "after" | "both" = "both",
): string {
  const hidden = side === "before" ? "added" : side === "after" ? "removed" : undefined;
  const diff = {
    nodes: whole.nodes.filter((node) => node.change !== hidden),
    edges: whole.edges.filter((edge) => edge.change !== hidden),
  };
  const ids = new Map<string, string>();
  const ref = (id: string) => {
    if (!ids.has(id)) ids.set(id, isTerminal(id) ? `t_${id}` : `n${ids.size}`);
    return ids.get(id) ?? id;
  };
  const lines = ["flowchart TD"];
  for (const node of diff.nodes) {
    const mark =
      node.change === "added"
        ? "+ "
        : node.change === "removed"
          ? "− "
          : node.change === "changed"
            ? "~ "
            : "";
    lines.push(
      `  ${ref(node.id)}["${escape(`${mark}${node.id}`)}<br/><small>${node.kind}</small>"]`,
    );
    if (node.change !== "same") lines.push(`  class ${ref(node.id)} ${node.change}`);
  }
  const styles: string[] = [];
  diff.edges.forEach((edge, index) => {
    const cap = edge.back ? ` ≤${edge.maxTraversals ?? 3}×` : "";
    const mark =
      edge.change === "added"
        ? "+ "
        : edge.change === "removed"
          ? "− "
          : edge.change === "changed"
            ? "~ "
            : "";
    const text = `${mark}${edge.label ?? ""}${cap}`.trim();
    const arrow = edge.back || edge.change === "removed" ? "-.->" : "-->";
    const target = isTerminal(edge.to) ? `${ref(edge.to)}((${edge.to}))` : ref(edge.to);
    lines.push(`  ${ref(edge.from)} ${arrow}${text === "" ? "" : `|"${escape(text)}"|`} ${target}`);
    if (edge.change !== "same")
      styles.push(`  linkStyle ${index} stroke:${EDGE_COLOURS[edge.change]},stroke-width:3px`);
  });
  return [...lines, ...styles, ...STYLES].join("\n") + "\n";
}

/** A summary line of the change: counts of added, removed and changed nodes and edges. */
export function describeDiff(diff: GraphDiff): string {
  const count = (parts: { change: string }[], change: string) =>
    parts.filter((part) => part.change === change).length;
  const of = (parts: { change: string }[], noun: string) =>
    ["added", "removed", "changed"]
      .map((change) => [count(parts, change), change] as const)
      .filter(([n]) => n > 0)
      .map(([n, change]) => `${n} ${noun}${n === 1 ? "" : "s"} ${change}`);
  const parts = [...of(diff.nodes, "node"), ...of(diff.edges, "edge")];
  return parts.length === 0 ? "The graph is unchanged." : `${parts.join(", ")}.`;
}

function escape(text: string): string {
  return text.replace(/"/g, "#quot;").replace(/</g, "#lt;").replace(/>/g, "#gt;");
}
