import { didYouMean, suggest } from "./edit-distance.js";
import type { Finding } from "./finding.js";
import type { RuleContext } from "./rule-context.js";
import { MAX_REWORK_ROUNDS, NODE_KINDS } from "./workflow.schema.js";

/** Node kinds a rework can re-open at: the ones that do work in a DevBox. */
const WORKING_KINDS = new Set(["run", "loop", "prototype"]);

/**
 * `rework-node`: `rework.node` must name a node of the workflow that does work (a run, loop or
 * prototype), and `rework.max_rounds` must be 1-10.
 */
export function reworkNode({ graph, source, data }: RuleContext): Finding[] {
  const rework = data.rework;
  if (typeof rework !== "object" || rework === null || Array.isArray(rework)) return [];
  const { node: id, max_rounds: rounds } = rework as Record<string, unknown>;
  const findings: Finding[] = [];
  if (typeof id === "string") {
    const node = graph.nodes.get(id);
    if (node === undefined) {
      const ids = [...graph.nodes.keys()];
      const meant = suggest(id, ids);
      const fix = meant === undefined ? `use one of ${ids.join(", ")}` : didYouMean(meant);
      findings.push(
        source.finding(
          "rework-node",
          ["rework", "node"],
          `rework.node "${id}" is not a node of this workflow: ${fix}`,
          { suggestion: meant },
        ),
      );
    } else if (
      // A kind that is no kind at all is the schema's finding, not this one's.
      (NODE_KINDS as readonly string[]).includes(node.kind ?? "") &&
      !WORKING_KINDS.has(node.kind ?? "")
    ) {
      findings.push(
        source.finding(
          "rework-node",
          ["rework", "node"],
          `rework.node "${id}" is ${node.kind === "approval" ? "an" : "a"} ${node.kind ?? "node"} node, which does no work: re-open at a run, loop or prototype node`,
        ),
      );
    }
  }
  if (typeof rounds === "number" && (rounds < 1 || rounds > MAX_REWORK_ROUNDS)) {
    findings.push(
      source.finding(
        "rework-node",
        ["rework", "max_rounds"],
        `rework.max_rounds is ${rounds}; it must be 1-${MAX_REWORK_ROUNDS}`,
      ),
    );
  }
  return findings;
}
