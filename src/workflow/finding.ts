/** How bad a finding is: errors make a workflow invalid, warnings do not. */
export type Severity = "error" | "warning";

/** The rule ids of the validator (DESIGN §2), plus `decision-edges`. */
export const RULE_IDS = [
  "yaml",
  "schema",
  "max-nodes",
  "unknown-node",
  "reserved-id",
  "forward-cycle",
  "back-edge-cap",
  "unreachable-node",
  "impossible-label",
  "missing-label",
  "duplicate-label",
  "branching-node",
  "decision-edges",
  "decision-without-devbox",
  "approval-timeout-edge",
  "approval-window",
  "prototype-variants",
  "loop-contract",
  "unknown-engine",
  "secret-literal",
  "no-give-up-branch",
  "budget-without-cost",
  "engine-without-key",
  "rework-node",
  "output-writer",
  "output-input",
] as const;

/** A validator rule id. */
export type RuleId = (typeof RULE_IDS)[number];

/** A segment of a path into the YAML document. */
export type PathSegment = string | number;

/** One problem the validator found, with where it is. */
export interface Finding {
  rule: RuleId;
  severity: Severity;
  /** What is wrong and how to fix it. */
  message: string;
  /** Dotted path of the offending YAML node, such as `nodes.implement.budget`. */
  path: string;
  /** 1-based line of the offending YAML node. */
  line: number;
  /** 1-based column of the offending YAML node. */
  column: number;
  /**
   * What the offending text most likely meant, when it looks like a typo of one known name
   * (`timeout` for `timout`): for editors offering a quick fix. The message says it too.
   */
  suggestion?: string;
}

/** Renders a path as `nodes.implement.gates[0].run`. */
export function formatPath(path: readonly PathSegment[]): string {
  let text = "";
  for (const segment of path) {
    if (typeof segment === "number") text += `[${segment}]`;
    else text += text === "" ? segment : `.${segment}`;
  }
  return text;
}

/** Orders findings by position, then rule. */
export function sortFindings(findings: Finding[]): Finding[] {
  return findings.sort(
    (a, b) => a.line - b.line || a.column - b.column || a.rule.localeCompare(b.rule),
  );
}
