import { builtInEngineFacts } from "./built-in-engines.js";
import type { Finding } from "./finding.js";
import type { RuleContext } from "./rule-context.js";

const record = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;

/**
 * `engine-without-key` (warning): a node uses a built-in engine and `devbox.secrets` lists none
 * of the variables that engine authenticates with, so its turns fail before the agent starts
 * (unless the CLI finds a stored login in a local run). One finding per engine, at its first use.
 */
export function engineWithoutKey({ graph, source, data }: RuleContext): Finding[] {
  const declared = record(data.engines) ?? {};
  const secrets = record(data.devbox)?.secrets;
  const listed = new Set(
    Array.isArray(secrets) ? secrets.filter((s) => typeof s === "string") : [],
  );
  const reported = new Set<string>();
  const findings: Finding[] = [];
  const check = (engine: unknown, path: (string | number)[]) => {
    if (typeof engine !== "string" || reported.has(engine) || Object.hasOwn(declared, engine))
      return;
    const names = builtInEngineFacts(engine)?.credentialEnv ?? [];
    if (names.length === 0 || names.some((name) => listed.has(name))) return;
    reported.add(engine);
    const [key = "", ...others] = names;
    const alternatives = others.length === 0 ? "" : ` (or one of ${others.join(", ")})`;
    const message = `engine ${engine} needs ${key}${alternatives} in the DevBox, and devbox.secrets lists none: add ${key} to devbox.secrets, or its turns fail before the agent starts`;
    findings.push(source.finding("engine-without-key", path, message, { severity: "warning" }));
  };
  for (const node of graph.nodes.values()) {
    check(record(node.fields.agent)?.engine, ["nodes", node.id, "agent", "engine"]);
    const variants = node.fields.variants;
    if (!Array.isArray(variants)) continue;
    for (const [index, variant] of variants.entries()) {
      check(record(variant)?.engine, ["nodes", node.id, "variants", index, "engine"]);
    }
  }
  return findings;
}
