import { describe, expect, it } from "vitest";
import { pendingQuestions } from "../../src/engine/judging.js";
import type { Effect } from "../../src/engine/model.js";
import { SimulatedRun, definitionOf, workflowOf } from "./harness.js";

const withoutSeq = (effect: Effect | undefined) =>
  effect === undefined
    ? undefined
    : Object.fromEntries(Object.entries(effect).filter(([key]) => key !== "seq"));

describe("pendingQuestions: what a restarted runtime asks again", () => {
  it("an agent decision waiting for its verdict: the same request, and nothing once answered", () => {
    const workflow = workflowOf(`version: 1
name: judged
on: { label: go }
nodes:
  review:
    kind: decision
    evaluator: agent
    question: Ship it?
    judge: { provider: openai, model: gpt-5 }
edges:
  - { from: review, to: done, label: approved }
  - { from: review, to: failed, label: rejected }
`);
    const sim = new SimulatedRun(definitionOf(workflow), {
      pause: (e) => e.type === "judge.request",
    }).start();
    const asked = sim.effects.find((e) => e.type === "judge.request");
    expect(pendingQuestions(sim.definition, sim.snapshot)).toEqual([withoutSeq(asked)]);
    sim.send({
      type: "judge.verdict",
      requestId: asked?.type === "judge.request" ? asked.requestId : "",
      label: "approved",
      reasoning: "ok",
      at: sim.tick(),
    });
    expect(pendingQuestions(sim.definition, sim.snapshot)).toEqual([]);
  });

  it("a prototype waiting for its judge: the same candidates", () => {
    const workflow = workflowOf(`version: 1
name: race
on: { label: go }
nodes:
  p:
    kind: prototype
    brief: Do it.
    variants: [{ engine: claude, model: a }, { engine: codex, model: b }]
    gates: [{ name: t, run: make test }]
    select: judge
    judge: { provider: anthropic, model: claude-opus-4-1 }
`);
    const sim = new SimulatedRun(definitionOf(workflow), {
      pause: (e) => e.type === "judge.request",
    }).start();
    const asked = sim.effects.find((e) => e.type === "judge.request");
    expect(asked).toMatchObject({ labels: ["v1", "v2"] });
    expect(pendingQuestions(sim.definition, sim.snapshot)).toEqual([withoutSeq(asked)]);
  });

  it("a loop waiting for the daily ledger: a check under the same request id", () => {
    const workflow = workflowOf(`version: 1
name: fixer
on: { label: go }
nodes:
  fix:
    kind: loop
    goal: Fix.
    agent: { engine: claude, model: m }
    gates: [{ name: t, run: make test }]
    budget: { max_iterations: 2, max_daily_cost_usd: 5 }
`);
    const sim = new SimulatedRun(definitionOf(workflow), {
      pause: (e) => e.type === "ledger.add",
    }).start();
    const asked = sim.effects.find((e) => e.type === "ledger.add");
    expect(pendingQuestions(sim.definition, sim.snapshot)).toEqual([
      { ...withoutSeq(asked), usd: 0 },
    ]);
  });

  it("nothing for a run that waits on people or on a DevBox", () => {
    const workflow = workflowOf(`version: 1
name: gate
on: { label: go }
nodes:
  build: { kind: run, run: make }
  ok: { kind: approval }
edges:
  - { from: build, to: ok }
`);
    const sim = new SimulatedRun(definitionOf(workflow), {
      pause: (e) => e.type === "devbox.claim",
    }).start();
    expect(pendingQuestions(sim.definition, sim.snapshot)).toEqual([]);
  });
});
