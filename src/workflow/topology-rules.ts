import type { Rule } from "./rule-context.js";
import { didYouMean, suggest } from "./edit-distance.js";
import type { Finding } from "./finding.js";
import { DEFAULT_MAX_TRAVERSALS, MAX_TRAVERSALS_CEILING, TERMINALS, isTerminal } from "./graph.js";
import { edgePath, nodePath } from "./rule-paths.js";

/** Most nodes a workflow may have. */
export const MAX_NODES = 20;

/** `max-nodes`: a workflow has at most {@link MAX_NODES} nodes. */
export const maxNodes: Rule = ({ graph, source }) => {
  const extra = [...graph.nodes.values()][MAX_NODES];
  if (extra === undefined) return [];
  const message = `this workflow has ${graph.nodes.size} nodes; the limit is ${MAX_NODES}: split it into several workflows`;
  return [source.finding("max-nodes", nodePath(extra), message, { target: "key" })];
};

/** `reserved-id`: a terminal's name cannot name a node. */
export const reservedId: Rule = ({ graph, source }) =>
  [...graph.nodes.values()]
    .filter((node) => isTerminal(node.id))
    .map((node) =>
      source.finding(
        "reserved-id",
        nodePath(node),
        `"${node.id}" is a terminal (${TERMINALS.join(", ")}) and cannot name a node: rename the node`,
        { target: "key" },
      ),
    );

/** `unknown-node`: an edge names no node; it is given the graph as written, typos and all. */
export const unknownNode: Rule = ({ graph, source }) => {
  const findings: Finding[] = [];
  const ids = [...graph.nodes.keys()];
  for (const edge of graph.edges) {
    if (isTerminal(edge.from)) {
      const message = `"${edge.from}" is a terminal and has no outgoing edges: start this edge at a node`;
      findings.push(source.finding("unknown-node", edgePath(edge, "from"), message));
    } else if (!graph.nodes.has(edge.from)) {
      const meant = suggest(edge.from, ids);
      findings.push(
        source.finding("unknown-node", edgePath(edge, "from"), unknown(edge.from, meant), {
          suggestion: meant,
        }),
      );
    }
    if (!graph.nodes.has(edge.to) && !isTerminal(edge.to)) {
      const meant = suggest(edge.to, [...ids, ...TERMINALS]);
      findings.push(
        source.finding("unknown-node", edgePath(edge, "to"), unknown(edge.to, meant), {
          suggestion: meant,
        }),
      );
    }
  }
  return findings;
};

function unknown(id: string, close: string | undefined): string {
  const hint =
    close === undefined ? `use a node id or one of ${TERMINALS.join(", ")}` : didYouMean(close);
  return `"${id}" is neither a node nor a terminal: ${hint}`;
}

/** `forward-cycle`: forward edges never form a cycle (a loop back is a back-edge). */
export const forwardCycle: Rule = ({ graph, source }) =>
  graph
    .forwardCycles()
    .map(({ closing, path }) =>
      source.finding(
        "forward-cycle",
        edgePath(closing),
        `forward edges form a cycle ${path.join(" → ")}: mark the edge from ${closing.from} to ${closing.to} with back: true and max_traversals`,
      ),
    );

/** `back-edge-cap`: `max_traversals` is on back-edges only, within its ceiling. */
export const backEdgeCap: Rule = ({ graph, source }) => {
  const findings: Finding[] = [];
  for (const edge of graph.edges) {
    const cap = edge.fields.max_traversals;
    if (cap === undefined) continue;
    if (!edge.back) {
      const message =
        "max_traversals caps back-edges only: add back: true, or remove max_traversals";
      findings.push(source.finding("back-edge-cap", edgePath(edge, "max_traversals"), message));
    } else if (typeof cap === "number" && (cap < 1 || cap > MAX_TRAVERSALS_CEILING)) {
      const message = `max_traversals must be between 1 and ${MAX_TRAVERSALS_CEILING}, not ${cap}`;
      findings.push(source.finding("back-edge-cap", edgePath(edge, "max_traversals"), message));
    }
  }
  return findings;
};

/** `unreachable-node`: every node can be reached from the entry. */
export const unreachableNode: Rule = ({ graph, source }) => {
  const reachable = graph.reachable();
  return [...graph.nodes.values()]
    .filter((node) => !reachable.has(node.id))
    .map((node) =>
      source.finding(
        "unreachable-node",
        nodePath(node),
        `the entry node ${graph.entry?.id ?? ""} can never reach ${node.id}: add an edge into it or remove it`,
        { target: "key" },
      ),
    );
};

/** `no-give-up-branch` (a warning): a back-edge's source has an `exhausted` edge. */
export const noGiveUpBranch: Rule = ({ graph, source }) =>
  graph.edges
    .filter((edge) => edge.back && graph.nodes.has(edge.from))
    .filter((edge) => !graph.outgoing(edge.from).some((other) => other.label === "exhausted"))
    .map((edge) => {
      const cap =
        typeof edge.fields.max_traversals === "number"
          ? edge.fields.max_traversals
          : DEFAULT_MAX_TRAVERSALS;
      const message = `after ${cap} traversals of this back-edge the run fails with back-edge-exhausted: add { from: ${edge.from}, to: escalated, label: exhausted } to give up deliberately`;
      return source.finding("no-give-up-branch", edgePath(edge), message, { severity: "warning" });
    });
