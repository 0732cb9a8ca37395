import { describe, expect, it } from "vitest";
import { definitionOf, workflowOf } from "../engine/harness.js";
import { useTestDynamo } from "../store/dynalite-fixture.js";
import { openRuntime } from "../helpers/instant-world.js";

const dynamo = useTestDynamo();

const workflow = workflowOf(`version: 1
name: two-gates
on: { label: go }
nodes:
  build: { kind: run, run: make }
  design: { kind: approval }
  ship: { kind: approval }
edges:
  - { from: build, to: design }
  - { from: design, to: ship, label: approved }
`);

describe("replicas over one store", () => {
  it("applies an event its cached copy would refuse when the store's version accepts it", async () => {
    const store = await dynamo.newStore();
    // Two replicas over one store, each answering its own DevBoxes at once.
    const [first, second] = [openRuntime(store), openRuntime(store)];
    await first.start(definitionOf(workflow, { runId: "r1" }), { repo: "acme/app" });
    for (let i = 0; i < 200 && (await store.getRun("r1"))?.status !== "awaiting_input"; i++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    await first.idle();
    // The first replica caches the run waiting at `design`; the second answers that gate.
    const at = Date.now();
    const design = await second.deliver("r1", {
      type: "approval.answer",
      decision: "approved",
      actor: "octocat",
      node: "design",
      at,
    });
    expect(design.applied).toBe(true);
    // The `ship` approval reaches the first replica, whose copy still waits at `design`.
    const ship = await first.deliver("r1", {
      type: "approval.answer",
      decision: "approved",
      actor: "octocat",
      node: "ship",
      at,
    });
    expect(ship).toMatchObject({ applied: true });
    expect(ship.state?.status).toBe("succeeded");
  });
});
