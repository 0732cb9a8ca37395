import { builtInEngineFacts, type EngineSpend } from "./built-in-engines.js";
import { isPricedModel } from "./model-prices.js";
import type { Finding } from "./finding.js";
import type { RuleContext } from "./rule-context.js";

const LOOP_BUDGETS = ["max_cost_per_iteration_usd", "max_daily_cost_usd"] as const;

const record = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;

/**
 * `budget-without-cost` (warning): a loop's cost budget (`max_cost_per_iteration_usd`,
 * `max_daily_cost_usd`) that cannot see what its agent spends, so it never stops the loop: the
 * engine reports no cost (a declared engine with neither `cost` nor `usage`), or its turns are
 * priced from their tokens (the built-in `codex`, a declared engine with `usage` only) and the
 * node's model is missing or has no known price. The run's `budget.max_cost_usd` is not flagged:
 * it also counts judges and other nodes, and a mixed workflow is common.
 */
export function budgetWithoutCost({ graph, source, data }: RuleContext): Finding[] {
  const declared = record(data.engines) ?? {};
  const spendOf = (engine: string): EngineSpend | undefined => {
    if (Object.hasOwn(declared, engine)) {
      const fields = record(declared[engine]);
      if (record(fields?.cost) !== undefined) return "reported";
      return record(fields?.usage) === undefined ? "none" : "priced";
    }
    return builtInEngineFacts(engine)?.spend;
  };
  /** Why `engine` on `model` cannot be costed, or undefined when it can. */
  const blind = (engine: string, model: unknown): string | undefined => {
    const spend = spendOf(engine);
    if (spend === "none") {
      const fix = Object.hasOwn(declared, engine)
        ? `add cost: { json_path: … } or usage: { input_tokens: …, output_tokens: … } to engines.${engine} if it prints them as JSON`
        : `use an engine that reports cost (claude), or rely on max_iterations and wall_clock`;
      return `engine ${engine} reports no cost, so its turns count as free; ${fix}`;
    }
    if (spend !== "priced") return undefined;
    if (typeof model !== "string") {
      return `engine ${engine} is priced from its tokens and the node's model, and no model is set; set agent.model to a model with a known price`;
    }
    if (isPricedModel(model)) return undefined;
    return `engine ${engine} is priced from its tokens and the model, and model ${model} has no known price, so its turns count as free; use a priced model or rely on max_iterations and wall_clock`;
  };
  const findings: Finding[] = [];
  for (const node of graph.nodes.values()) {
    const agent = record(node.fields.agent);
    const engine = agent?.engine;
    const budget = record(node.fields.budget);
    if (node.kind !== "loop" || budget === undefined || typeof engine !== "string") continue;
    const why = blind(engine, agent?.model);
    if (why === undefined) continue;
    for (const field of LOOP_BUDGETS) {
      if (budget[field] === undefined) continue;
      const message = `${field} on loop ${node.id} cannot stop it: ${why}`;
      findings.push(
        source.finding("budget-without-cost", ["nodes", node.id, "budget", field], message, {
          severity: "warning",
        }),
      );
    }
  }
  return findings;
}
