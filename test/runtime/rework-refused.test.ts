import { describe, expect, it } from "vitest";
import type { Effect, RunEvent } from "../../src/engine/model.js";
import type { EffectPerformer } from "../../src/runtime/effects.js";
import { Runtime } from "../../src/runtime/runtime.js";
import { definitionOf, workflowOf } from "../engine/harness.js";
import { useTestDynamo } from "../store/dynalite-fixture.js";

const dynamo = useTestDynamo();

/** Answers DevBox effects at once, through the runtime. */
class InstantWorld implements EffectPerformer {
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
    return Promise.resolve({ done: effect.seq });
  }
}

describe("a refused rework through the runtime", () => {
  it("is answered refused with the reason, and its rework.refused evidence is stored", async () => {
    const store = await dynamo.newStore();
    const world = new InstantWorld();
    const runtime = new Runtime({ store, performer: world, now: Date.now });
    world.runtime = runtime;
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
