import { parseDocument } from "yaml";
import { resolveEngines } from "../agents/engines.js";
import { lookUpCommand, missingMessage } from "../devbox/local/command-lookup.js";
import type { Finding, PathSegment } from "../workflow/finding.js";
import { SourceMap } from "../workflow/source-map.js";
import type { Workflow } from "../workflow/workflow.schema.js";

/** The rules only `validate --strict` checks: they depend on this host, not on the file. */
export type HostRuleId = "engine-command-missing";

/** A finding of the file's own rules, or of the host's. */
export type ReportedFinding = Omit<Finding, "rule"> & { rule: Finding["rule"] | HostRuleId };

/**
 * `engine-command-missing` (error, `--strict` only): an agent CLI a node starts (its engine's
 * argv[0]) is not on `path`, the PATH a local run's DevBoxes get, so the run would fail at its
 * claim. One finding per command, at its first use; a path into the checkout is not checked.
 */
export function missingEngineCommands(
  text: string,
  workflow: Workflow,
  path: string,
): ReportedFinding[] {
  const engines = resolveEngines(workflow);
  const source = new SourceMap(parseDocument(text), text);
  const reported = new Set<string>();
  const findings: ReportedFinding[] = [];
  for (const [engine, at] of engineUses(workflow)) {
    const command = engines[engine]?.command[0];
    if (command === undefined || command === "" || reported.has(command)) continue;
    reported.add(command);
    const lookup = lookUpCommand(command, path);
    if (!("missing" in lookup)) continue;
    const message = `engine ${engine}: ${missingMessage(lookup.missing)}`;
    // The position comes from the source map; the rule is the host's, not one of the file's.
    findings.push({
      ...source.finding("unknown-engine", at, message),
      rule: "engine-command-missing",
    });
  }
  return findings;
}

/** Each engine a node uses, with the path of its `engine` key, in the file's order. */
function engineUses(workflow: Workflow): [string, PathSegment[]][] {
  return Object.entries(workflow.nodes).flatMap(([id, node]): [string, PathSegment[]][] => {
    if (node.kind === "prototype") {
      return node.variants.map((variant, index) => [
        variant.engine,
        ["nodes", id, "variants", index, "engine"],
      ]);
    }
    return "agent" in node && node.agent !== undefined
      ? [[node.agent.engine, ["nodes", id, "agent", "engine"]]]
      : [];
  });
}
