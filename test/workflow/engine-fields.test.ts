import { describe, expect, it } from "vitest";
import { expectClean, validate } from "./helpers.js";

const loop = (budget: string, engines: string) => `version: 1
name: t
on: { label: go }
${engines}nodes:
  fix:
    kind: loop
    goal: Fix it.
    agent: { engine: aider, model: gpt-4.1 }
    gates: [{ name: t, run: make test }]
    budget: { max_iterations: 3, ${budget} }
`;

describe("engines.<name>.usage", () => {
  it("refuses a usage mapping without output_tokens, naming the field", () => {
    const text = loop(
      "max_daily_cost_usd: 20",
      'engines:\n  aider: { command: [aider, "{prompt_file}"], usage: { input_tokens: tokens.in } }\n',
    );
    const result = validate(text);
    expect(result.ok).toBe(false);
    expect(result.findings.map((f) => [f.rule, f.path])).toContainEqual([
      "schema",
      "engines.aider.usage.output_tokens",
    ]);
  });
});

describe("{env:NAME} in a declared engine's command", () => {
  it("refuses a key-like variable, which would put a secret into argv", () => {
    const text = loop(
      "wall_clock: 1h",
      'engines:\n  aider: { command: [aider, --api-key, "{env:OPENAI_API_KEY}", "{prompt_file}"] }\n',
    );
    const result = validate(text);
    expect(result.ok).toBe(false);
    expect(result.findings.map((f) => [f.rule, f.path, f.message])).toContainEqual([
      "schema",
      "engines.aider.command",
      "an engine command must not put a key into argv, where other processes can read it: {env:…} is for endpoints; let the CLI read its key from the environment",
    ]);
  });

  it("accepts an endpoint variable", () => {
    expectClean(
      loop(
        "wall_clock: 1h",
        'engines:\n  aider: { command: [aider, --api-base, "{env:OPENAI_BASE_URL}", "{prompt_file}"], cost: { json_path: c } }\n',
      ),
    );
  });
});
