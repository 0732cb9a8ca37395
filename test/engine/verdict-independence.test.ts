import { describe, expect, it } from "vitest";
import type { EvidenceEntry } from "../../src/engine/model.js";
import { SimulatedRun, definitionOf, workflowOf } from "./harness.js";

/** The evidence of the judge's verdict after an agent with `engine`/`model` wrote the work. */
function verdictAfter(engine: string, model: string, judge: string): EvidenceEntry | undefined {
  const workflow = workflowOf(`version: 1
name: judged
on: { label: go }
devbox: { secrets: [ANTHROPIC_API_KEY, OPENAI_API_KEY] }
nodes:
  write: { kind: run, agent: { engine: ${engine}, model: ${model} }, prompt: Write it. }
  check:
    kind: decision
    evaluator: agent
    question: Ready?
    judge: ${judge}
edges:
  - { from: write, to: check }
  - { from: check, to: done, label: "yes" }
  - { from: check, to: failed, label: "no" }
`);
  const sim = new SimulatedRun(definitionOf(workflow)).start();
  return sim.effects.flatMap((e) =>
    e.type === "evidence" && e.entry.kind === "decision.evaluated" ? [e.entry] : [],
  )[0];
}

describe("a judge's verdict records who judged whose work", () => {
  it("is not independent when the judge is the author's provider and model", () => {
    expect(verdictAfter("claude", "opus", "{ provider: anthropic, model: opus }")).toMatchObject({
      provider: "anthropic",
      judgeModel: "opus",
      authors: [{ engine: "claude", model: "opus", provider: "anthropic" }],
      independent: false,
    });
  });

  it("is independent with another model of the same provider, or another provider", () => {
    expect(verdictAfter("claude", "opus", "{ provider: anthropic, model: haiku }")).toMatchObject({
      independent: true,
    });
    expect(verdictAfter("codex", "gpt-5", "{ provider: anthropic, model: opus }")).toMatchObject({
      authors: [{ engine: "codex", model: "gpt-5", provider: "openai" }],
      independent: true,
    });
  });
});
