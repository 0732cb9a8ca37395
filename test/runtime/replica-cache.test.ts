import { describe, expect, it } from "vitest";
import type { Effect, RunEvent } from "../../src/engine/model.js";
import type { EffectPerformer } from "../../src/runtime/effects.js";
import { Runtime } from "../../src/runtime/runtime.js";
import { definitionOf, workflowOf } from "../engine/harness.js";
import { useTestDynamo } from "../store/dynalite-fixture.js";

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

/** Answers a DevBox claim and every command at once, as a replica's DevBoxes would. */
class Replica implements EffectPerformer {
  runtime!: Runtime;
  perform(runId: string, effect: Effect): Promise<unknown> {
    const at = Date.now();
    const later = (event: RunEvent) =>
      queueMicrotask(() => void this.runtime.deliver(runId, event).catch(() => {}));
    if (effect.type === "devbox.claim")
      later({ type: "devbox.ready", devboxId: effect.devboxId, ok: true, at });
    if (effect.type === "command.dispatch") {
      const result = {
        commandId: effect.request.commandId,
        exitCode: 0,
        output: "",
        durationMs: 1,
      };
      later({ type: "command.finished", devboxId: effect.devboxId, result, at });
    }
    return Promise.resolve({});
  }
}

describe("replicas over one store", () => {
  it("applies an event its cached copy would refuse when the store's version accepts it", async () => {
    const store = await dynamo.newStore();
    const replicas = [new Replica(), new Replica()];
    const [first, second] = replicas.map((replica) => {
      replica.runtime = new Runtime({ store, performer: replica, now: Date.now });
      return replica.runtime;
    }) as [Runtime, Runtime];
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
