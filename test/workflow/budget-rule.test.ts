import { describe, expect, it } from "vitest";
import { expectClean, expectOne, findingsOf, validate } from "./helpers.js";

const loop = (engine: string, budget: string, engines = "", model = "model: m") => `version: 1
name: t
on: { label: go }
devbox: { secrets: [ANTHROPIC_API_KEY, OPENAI_API_KEY] }
${engines}nodes:
  fix:
    kind: loop
    goal: Fix it.
    agent: { engine: ${engine}${model === "" ? "" : `, ${model}`} }
    gates: [{ name: t, run: make test }]
    budget: { max_iterations: 3, ${budget} }
`;

describe("budget-without-cost", () => {
  it("warns for each cost budget of a loop whose declared engine reports no cost, and says how to fix it", () => {
    const text = loop(
      "aider",
      "max_cost_per_iteration_usd: 2, max_daily_cost_usd: 20",
      'engines:\n  aider: { command: [aider, --message-file, "{prompt_file}"] }\n',
    );
    const findings = findingsOf(text, "budget-without-cost");
    expect(findings.map((f) => [f.path, f.severity])).toEqual([
      ["nodes.fix.budget.max_cost_per_iteration_usd", "warning"],
      ["nodes.fix.budget.max_daily_cost_usd", "warning"],
    ]);
    expect(findings[0]?.message).toBe(
      "max_cost_per_iteration_usd on loop fix cannot stop it: engine aider reports no cost, so its turns count as free; add cost: { json_path: … } or usage: { input_tokens: …, output_tokens: … } to engines.aider if it prints them as JSON",
    );
    // A warning: the workflow is still valid.
    expect(validate(text).ok).toBe(true);
  });

  it("is quiet for the built-in codex on a model with a known price: its tokens are priced", () => {
    expectClean(loop("codex", "max_daily_cost_usd: 20", "", "model: gpt-5-codex"));
  });

  it("warns for codex on a model without a known price, or without a model", () => {
    const unpriced = loop("codex", "max_daily_cost_usd: 20", "", "model: my-finetune");
    expect(expectOne(unpriced, "budget-without-cost", { needle: "20 }" }, "warning").message).toBe(
      "max_daily_cost_usd on loop fix cannot stop it: engine codex is priced from its tokens and the model, and model my-finetune has no known price, so its turns count as free; use a priced model or rely on max_iterations and wall_clock",
    );
    const unset = loop("codex", "max_daily_cost_usd: 20", "", "");
    expect(expectOne(unset, "budget-without-cost", { needle: "20 }" }, "warning").message).toBe(
      "max_daily_cost_usd on loop fix cannot stop it: engine codex is priced from its tokens and the node's model, and no model is set; set agent.model to a model with a known price",
    );
  });

  it("treats a declared engine with usage but no cost as priced from its model", () => {
    const engines =
      'engines:\n  aider: { command: [aider, "{prompt_file}"], usage: { input_tokens: tokens.in, output_tokens: tokens.out } }\n';
    expectClean(loop("aider", "max_daily_cost_usd: 20", engines, "model: gpt-4.1"));
    const finding = expectOne(
      loop("aider", "max_daily_cost_usd: 20", engines, "model: local-llama"),
      "budget-without-cost",
      { needle: "20 }" },
      "warning",
    );
    expect(finding.message).toMatch(/model local-llama has no known price/);
  });

  it("is quiet for engines that report cost, and for loops without cost budgets", () => {
    expectClean(loop("claude", "max_daily_cost_usd: 20"));
    expectClean(
      loop(
        "aider",
        "max_daily_cost_usd: 20",
        'engines:\n  aider: { command: [aider, "{prompt_file}"], cost: { json_path: cost_usd } }\n',
      ),
    );
    expectClean(loop("codex", "wall_clock: 1h"));
  });

  it("follows a declared engine that replaces a built-in", () => {
    const text = loop(
      "claude",
      "max_daily_cost_usd: 20",
      'engines:\n  claude: { command: [my-claude, "{prompt_file}"] }\n',
    );
    expect(findingsOf(text, "budget-without-cost")).toHaveLength(1);
  });
});
