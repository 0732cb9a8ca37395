import { BUILT_IN_ENGINES } from "./built-in-engines.js";
import { budgetWithoutCost } from "./budget-rule.js";
import type { Rule } from "./rule-context.js";
import { engineWithoutKey } from "./engine-key-rule.js";
import { parseDuration, DURATION_PATTERN } from "./duration.js";
import { didYouMean, suggest } from "./edit-distance.js";
import { outputRules } from "./outputs-rule.js";
import { reworkNode } from "./rework-rule.js";
import type { Finding } from "./finding.js";
import {
  DEFAULT_MAX_TRAVERSALS,
  containerOutcomes,
  MAX_TRAVERSALS_CEILING,
  TERMINALS,
  isTerminal,
  type GraphEdge,
  type GraphNode,
  type WorkflowGraph,
} from "./graph.js";

/** Most nodes a workflow may have. */
export const MAX_NODES = 20;

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

const nodePath = (node: GraphNode, ...rest: (string | number)[]) => ["nodes", node.id, ...rest];
const edgePath = (edge: GraphEdge, field?: string) =>
  field === undefined || !(field in edge.fields)
    ? ["edges", edge.index]
    : ["edges", edge.index, field];
const describe = (node: GraphNode, graph: WorkflowGraph) => {
  const evaluator = graph.evaluator(node);
  return evaluator === undefined
    ? `${node.kind ?? "node"} ${node.id}`
    : `${evaluator} decision ${node.id}`;
};
const isContainer = (node: GraphNode) => containerOutcomes(node.kind) !== undefined;

const maxNodes: Rule = ({ graph, source }) => {
  const extra = [...graph.nodes.values()][MAX_NODES];
  if (extra === undefined) return [];
  const message = `this workflow has ${graph.nodes.size} nodes; the limit is ${MAX_NODES}: split it into several workflows`;
  return [source.finding("max-nodes", nodePath(extra), message, { target: "key" })];
};

const reservedId: Rule = ({ graph, source }) =>
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

const forwardCycle: Rule = ({ graph, source }) =>
  graph
    .forwardCycles()
    .map(({ closing, path }) =>
      source.finding(
        "forward-cycle",
        edgePath(closing),
        `forward edges form a cycle ${path.join(" → ")}: mark the edge from ${closing.from} to ${closing.to} with back: true and max_traversals`,
      ),
    );

const backEdgeCap: Rule = ({ graph, source }) => {
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

const unreachableNode: Rule = ({ graph, source }) => {
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

const impossibleLabel: Rule = ({ graph, source }) => {
  const findings: Finding[] = [];
  for (const edge of graph.edges) {
    const node = graph.nodes.get(edge.from);
    if (node === undefined || edge.label === undefined) continue;
    const labels = graph.producibleLabels(node.id);
    if (labels === undefined || labels.has(edge.label)) continue;
    const message = isContainer(node)
      ? `${describe(node, graph)} routes on its one unlabelled edge and never produces "${edge.label}": remove the label` +
        (labels.size > 0 ? ` (its only label is ${[...labels].join(", ")})` : "")
      : `${describe(node, graph)} can never produce "${edge.label}": use one of ${[...labels].join(", ")}`;
    findings.push(source.finding("impossible-label", edgePath(edge, "label"), message));
  }
  return findings;
};

const labelRules: Rule = ({ graph, source }) => {
  const findings: Finding[] = [];
  for (const node of graph.nodes.values()) {
    const edges = graph.outgoing(node.id);
    const labelled = node.kind === "decision" || node.kind === "approval";
    const seen = new Set<string>();
    let unlabelled = 0;
    for (const edge of edges) {
      if (edge.label === undefined) {
        unlabelled++;
        if (labelled) {
          const message = `edges out of ${describe(node, graph)} need a label saying which outcome takes them`;
          findings.push(source.finding("missing-label", edgePath(edge), message));
        } else if (isContainer(node) && unlabelled === 2) {
          const message = `${describe(node, graph)} has more than one unlabelled outgoing edge: a single token cannot take both; route with a decision node`;
          findings.push(source.finding("branching-node", edgePath(edge), message));
        }
      } else if (seen.has(edge.label)) {
        const message = `${node.id} already has an edge labelled "${edge.label}": one label leads to one place; remove this edge or give it another label`;
        findings.push(source.finding("duplicate-label", edgePath(edge, "label"), message));
      } else {
        seen.add(edge.label);
      }
    }
    if (graph.evaluator(node) === "agent" && edges.length < 2) {
      const message = `agent decision ${node.id} needs at least two outgoing labelled edges for its judge to choose between`;
      findings.push(source.finding("decision-edges", nodePath(node), message, { target: "key" }));
    }
  }
  return findings;
};

const decisionWithoutDevBox: Rule = ({ graph, source }) => {
  // Where a run may stand without a DevBox, and why: its entry, or after an approval.
  const origin = new Map<string, string>();
  const queue: [string, string][] = [];
  const entry = graph.entry;
  if (entry !== undefined) queue.push([entry.id, "at the run's entry"]);
  const reachable = graph.reachable();
  for (const node of graph.nodes.values()) {
    if (node.kind !== "approval" || !reachable.has(node.id)) continue;
    for (const edge of graph.outgoing(node.id))
      queue.push([edge.to, `after approval ${node.id} releases it`]);
  }
  while (queue.length > 0) {
    const [id, why] = queue.shift() as [string, string];
    const node = graph.nodes.get(id);
    if (node === undefined || origin.has(id)) continue;
    origin.set(id, why);
    if (node.kind !== "decision") continue;
    for (const edge of graph.outgoing(id)) queue.push([edge.to, why]);
  }
  const findings: Finding[] = [];
  for (const [id, why] of origin) {
    const node = graph.nodes.get(id) as GraphNode;
    if (graph.evaluator(node) !== "deterministic") continue;
    const message = `deterministic decision ${id} runs a command but may be entered with no DevBox (${why}): put a run, loop or prototype node before it, or use evaluator: status`;
    findings.push(
      source.finding("decision-without-devbox", nodePath(node), message, { target: "key" }),
    );
  }
  return findings;
};

const approvalRules: Rule = ({ graph, source }) => {
  const findings: Finding[] = [];
  for (const node of graph.nodes.values()) {
    if (node.kind !== "approval") continue;
    const onTimeout = node.fields.on_timeout;
    if (
      typeof onTimeout === "string" &&
      !graph.outgoing(node.id).some((edge) => edge.label === onTimeout)
    ) {
      const labels = [
        ...new Set(
          graph.outgoing(node.id).flatMap((edge) => (edge.label === undefined ? [] : [edge.label])),
        ),
      ];
      const message = `on_timeout "${onTimeout}" names no outgoing edge of ${node.id}: add an edge labelled "${onTimeout}"${labels.length > 0 ? ` or use one of ${labels.join(", ")}` : ""}`;
      findings.push(source.finding("approval-timeout-edge", nodePath(node, "on_timeout"), message));
    }
    const timeout = node.fields.timeout;
    if (typeof timeout === "string" && DURATION_PATTERN.test(timeout)) {
      const ms = parseDuration(timeout);
      if (ms < HOUR || ms > 30 * DAY) {
        const message = `approval timeout ${timeout} is outside 1h to 30d: set a timeout between 1h and 30d (people need time to answer, and a run should not wait forever)`;
        findings.push(source.finding("approval-window", nodePath(node, "timeout"), message));
      }
    }
  }
  return findings;
};

const prototypeVariants: Rule = ({ graph, source }) =>
  [...graph.nodes.values()].flatMap((node) => {
    const variants = node.fields.variants;
    if (node.kind !== "prototype" || !Array.isArray(variants)) return [];
    if (variants.length >= 2 && variants.length <= 6) return [];
    const message = `prototype ${node.id} has ${variants.length} variant${variants.length === 1 ? "" : "s"}: a race needs 2 to 6`;
    return [source.finding("prototype-variants", nodePath(node, "variants"), message)];
  });

const loopContract: Rule = ({ graph, source }) => {
  const findings: Finding[] = [];
  for (const node of graph.nodes.values()) {
    if (node.kind !== "loop") continue;
    const gates = node.fields.gates;
    if (!Array.isArray(gates) || gates.length === 0) {
      const message = `loop ${node.id} has no gates: add gates: [{ name, run }] so it knows when the work is done`;
      findings.push(
        source.finding("loop-contract", nodePath(node, "gates"), message, { target: "key" }),
      );
    }
    const budget = node.fields.budget;
    const max =
      typeof budget === "object" && budget !== null
        ? (budget as Record<string, unknown>).max_iterations
        : undefined;
    if (max === undefined) {
      const message = `loop ${node.id} has no budget.max_iterations: set one between 1 and 50 so it cannot run forever`;
      findings.push(
        source.finding("loop-contract", nodePath(node, "budget"), message, { target: "key" }),
      );
    } else if (typeof max === "number" && (max < 1 || max > 50)) {
      const message = `budget.max_iterations must be between 1 and 50, not ${max}`;
      findings.push(
        source.finding("loop-contract", nodePath(node, "budget", "max_iterations"), message),
      );
    }
  }
  return findings;
};

const unknownEngine: Rule = ({ graph, source, data }) => {
  const declared =
    typeof data.engines === "object" && data.engines !== null ? Object.keys(data.engines) : [];
  const known = new Set<string>([...BUILT_IN_ENGINES, ...declared]);
  const findings: Finding[] = [];
  const check = (engine: unknown, path: (string | number)[]) => {
    if (typeof engine !== "string" || known.has(engine)) return;
    const meant = suggest(engine, known);
    const fix = meant === undefined ? "declare it or fix the name" : didYouMean(meant);
    const message = `engine "${engine}" is neither built in (${BUILT_IN_ENGINES.join(", ")}) nor declared under engines: ${fix}`;
    findings.push(source.finding("unknown-engine", path, message, { suggestion: meant }));
  };
  for (const node of graph.nodes.values()) {
    const agent = node.fields.agent;
    if (typeof agent === "object" && agent !== null) {
      check((agent as Record<string, unknown>).engine, nodePath(node, "agent", "engine"));
    }
    const variants = node.fields.variants;
    if (!Array.isArray(variants)) continue;
    for (const [index, variant] of variants.entries()) {
      if (typeof variant === "object" && variant !== null) {
        check(
          (variant as Record<string, unknown>).engine,
          nodePath(node, "variants", index, "engine"),
        );
      }
    }
  }
  return findings;
};

const noGiveUpBranch: Rule = ({ graph, source }) =>
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

/** The graph rules, each reporting every finding it has. */
export const GRAPH_RULES: readonly Rule[] = [
  maxNodes,
  reservedId,
  unknownNode,
  forwardCycle,
  backEdgeCap,
  unreachableNode,
  impossibleLabel,
  labelRules,
  decisionWithoutDevBox,
  approvalRules,
  prototypeVariants,
  loopContract,
  unknownEngine,
  noGiveUpBranch,
  budgetWithoutCost,
  engineWithoutKey,
  reworkNode,
  outputRules,
];
