import { describe, expect, it } from "vitest";
import type { Judge } from "../../src/runtime/judge.js";
import { definitionOf, workflowOf } from "../engine/harness.js";
import { useTestDynamo } from "../store/dynalite-fixture.js";
import { InstantWorld } from "../helpers/instant-world.js";

const dynamo = useTestDynamo();

const workflow = workflowOf(`version: 1
name: judged
on: { label: go }
nodes:
  build: { kind: run, run: make }
  review:
    kind: decision
    evaluator: agent
    question: Ship it?
    judge: { provider: anthropic, model: claude-opus-4-1 }
edges:
  - { from: build, to: review }
  - { from: review, to: done, label: approved }
  - { from: review, to: failed, label: rejected }
`);

describe("questions in flight when a runtime stops", () => {
  it("a verdict lost with its process is asked again on resume, and the run goes on", async () => {
    const store = await dynamo.newStore();
    let asked = 0;
    // The first process's judge never answers: its process "died" while the judge was thinking.
    const lost: Judge = { decide: () => (asked++, new Promise(() => undefined)) };
    const first = new InstantWorld({ store, judge: lost, repository: "acme/app" });
    await first.runtime.start(definitionOf(workflow, { runId: "r1" }), { repo: "acme/app" });
    for (let i = 0; i < 200 && asked === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(asked).toBe(1);

    const answers: Judge = {
      decide: (request) =>
        Promise.resolve({ label: request.labels[0] ?? "", reasoning: "asked again" }),
    };
    const second = new InstantWorld({ store, judge: answers, repository: "acme/app" });
    const loaded = await second.runtime.reconcile("r1");
    if (loaded === undefined) throw new Error("no run");
    expect(await second.effects.resumeQuestions("r1", loaded.document, second.events)).toBe(1);
    const done = await second.settled("r1");
    expect(done.state.status).toBe("succeeded");
    expect(done.state.visits.at(-1)).toMatchObject({ node: "review", outcome: "approved" });
    expect(second.errors).toEqual([]);
  });
});
