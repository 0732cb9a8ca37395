import { BUILT_IN_ENGINE_COMMANDS } from "../agents/engines.js";
import type { Finding } from "./finding.js";
import type { RuleContext } from "./graph-rules.js";

const LOOP_BUDGETS = ["max_cost_per_iteration_usd", "max_daily_cost_usd"] as const;

const record = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;

/**
 * `budget-without-cost` (warning): a loop's cost budget (`max_cost_per_iteration_usd`,
 * `max_daily_cost_usd`) whose agent engine reports no cost (a declared engine without
 * `cost.json_path`, or the built-in `codex`): its turns count as free, so the budget never stops
 * the loop. The run's `budget.max_cost_usd` is not flagged: it also counts judges and other
 * nodes, and a mixed workflow is common.
 */
export function budgetWithoutCost({ graph, source, data }: RuleContext): Finding[] {
  const declared = record(data.engines) ?? {};
  const silent = (engine: unknown): engine is string => {
    if (typeof engine !== "string") return false;
    if (Object.hasOwn(declared, engine))
      return record(record(declared[engine])?.cost) === undefined;
    const builtIn = BUILT_IN_ENGINE_COMMANDS[engine];
    return builtIn !== undefined && builtIn.costJsonPath === undefined;
  };
  const fix = (engine: string) =>
    Object.hasOwn(declared, engine)
      ? `add cost: { json_path: … } to engines.${engine} if it prints its cost as JSON`
      : `use an engine that reports cost (claude), or rely on max_iterations and wall_clock`;
  const findings: Finding[] = [];
  for (const node of graph.nodes.values()) {
    const engine = record(node.fields.agent)?.engine;
    const budget = record(node.fields.budget);
    if (node.kind !== "loop" || budget === undefined || !silent(engine)) continue;
    for (const field of LOOP_BUDGETS) {
      if (budget[field] === undefined) continue;
      const message = `${field} on loop ${node.id} cannot stop it: engine ${engine} reports no cost, so its turns count as free; ${fix(engine)}`;
      findings.push(
        source.finding("budget-without-cost", ["nodes", node.id, "budget", field], message, {
          severity: "warning",
        }),
      );
    }
  }
  return findings;
}
