import type { Finding } from "../workflow/finding.js";

/** What on the canvas a finding belongs to. */
export type FindingTarget =
  { kind: "node"; id: string } | { kind: "edge"; index: number } | { kind: "workflow" };

/** The node or edge a finding's path names (`nodes.<id>…`, `edges[<n>]…`), else the workflow. */
export function targetOf(finding: Pick<Finding, "path">): FindingTarget {
  const node = /^nodes\.([^.[]+)/.exec(finding.path);
  if (node?.[1] !== undefined) return { kind: "node", id: node[1] };
  const edge = /^edges\[(\d+)\]/.exec(finding.path);
  if (edge?.[1] !== undefined) return { kind: "edge", index: Number(edge[1]) };
  return { kind: "workflow" };
}
