import { describe, expect, it } from "vitest";
import { expectClean, expectOne, findingsOf, validate } from "./helpers.js";

const loop = (engine: string, budget: string, engines = "") => `version: 1
name: t
on: { label: go }
${engines}nodes:
  fix:
    kind: loop
    goal: Fix it.
    agent: { engine: ${engine}, model: m }
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
      "max_cost_per_iteration_usd on loop fix cannot stop it: engine aider reports no cost, so its turns count as free; add cost: { json_path: … } to engines.aider if it prints its cost as JSON",
    );
    // A warning: the workflow is still valid.
    expect(validate(text).ok).toBe(true);
  });

  it("warns for the built-in codex, which reports tokens but no cost", () => {
    const text = loop("codex", "max_daily_cost_usd: 20");
    const finding = expectOne(text, "budget-without-cost", { needle: "20 }" }, "warning");
    expect(finding.message).toMatch(
      /engine codex reports no cost.*rely on max_iterations and wall_clock/,
    );
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
