import { describe, expect, it } from "vitest";
import { definitionOf, workflowOf } from "../engine/harness.js";
import { useTestDynamo } from "../store/dynalite-fixture.js";
import { openRuntime } from "../helpers/instant-world.js";

const dynamo = useTestDynamo();

describe("a refused rework through the runtime", () => {
  it("is answered refused with the reason, and its rework.refused evidence is stored", async () => {
    const store = await dynamo.newStore();
    const runtime = openRuntime(store);
    const workflow = workflowOf(`version: 1
name: one
on: { label: go }
nodes:
  a: { kind: run, run: a }
`);
    await runtime.start(definitionOf(workflow, { runId: "rw" }), { repo: "acme/app" });
    for (let i = 0; i < 200 && (await store.getRun("rw"))?.status !== "succeeded"; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await runtime.idle();
    const delivery = await runtime.deliver("rw", {
      type: "run.rework",
      source: "review",
      actor: "@carol",
      feedback: [],
      at: Date.now(),
    });
    if (delivery.applied) throw new Error("the rework was applied");
    expect(delivery.refused.message).toMatch(/has no rework: section/);
    await runtime.idle();
    const evidence = await store.listEvidence("rw");
    const refused = evidence
      .map((record) => JSON.stringify(record))
      .filter((text) => text.includes("rework.refused"));
    expect(refused).toHaveLength(1);
    expect((await store.getRun("rw"))?.status).toBe("succeeded");
  });
});
