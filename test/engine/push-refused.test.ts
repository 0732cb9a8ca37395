import { describe, expect, it } from "vitest";
import { step } from "../../src/engine/step.js";
import { SimulatedRun, definitionOf, workflowOf } from "./harness.js";

describe("a push the hub refused", () => {
  it("is recorded as push.refused evidence, even after the run ended, and moves nothing", () => {
    const sim = new SimulatedRun(
      definitionOf(
        workflowOf(`version: 1
name: t
on: { label: go }
nodes:
  a: { kind: run, run: make }
`),
      ),
    ).start();
    const result = step(sim.definition, sim.snapshot, {
      type: "push.refused",
      devboxId: "d1",
      ref: "refs/heads/main",
      reason: "only the run's branches may be pushed",
      at: 5,
    });
    expect(result.refused).toBeUndefined();
    expect(result.snapshot.status).toBe(sim.snapshot.status);
    const evidence = result.effects.flatMap((effect) =>
      effect.type === "evidence" ? [effect.entry] : [],
    );
    expect(evidence).toEqual([
      expect.objectContaining({
        kind: "push.refused",
        devbox: "d1",
        ref: "refs/heads/main",
        reason: "only the run's branches may be pushed",
      }),
    ]);
  });
});
