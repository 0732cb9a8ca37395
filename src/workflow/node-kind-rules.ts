import { BUILT_IN_ENGINES } from "./built-in-engines.js";
import { parseDuration, DURATION_PATTERN } from "./duration.js";
import { didYouMean, suggest } from "./edit-distance.js";
import type { Finding } from "./finding.js";
import type { Rule } from "./rule-context.js";
import { nodePath } from "./rule-paths.js";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** `approval-timeout-edge` and `approval-window`: an approval's timeout and where it leads. */
export const approvalRules: Rule = ({ graph, source }) => {
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

/** `prototype-variants`: a prototype races 2 to 6 variants. */
export const prototypeVariants: Rule = ({ graph, source }) =>
  [...graph.nodes.values()].flatMap((node) => {
    const variants = node.fields.variants;
    if (node.kind !== "prototype" || !Array.isArray(variants)) return [];
    if (variants.length >= 2 && variants.length <= 6) return [];
    const message = `prototype ${node.id} has ${variants.length} variant${variants.length === 1 ? "" : "s"}: a race needs 2 to 6`;
    return [source.finding("prototype-variants", nodePath(node, "variants"), message)];
  });

/** `loop-contract`: a loop has gates and a bounded `budget.max_iterations`. */
export const loopContract: Rule = ({ graph, source }) => {
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

/** `unknown-engine`: agents and variants name a built-in or declared engine. */
export const unknownEngine: Rule = ({ graph, source, data }) => {
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
