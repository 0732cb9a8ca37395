import { describe, expect, it } from "vitest";
import { describeEcsStatus } from "../../src/github/setup/executor-choice.js";
import { renderStatusComment } from "../../src/github/surfaces/render-status.js";
import { SimulatedRun, definitionOf, workflowOf } from "../engine/harness.js";

describe("DevBox notices on the status comment", () => {
  it("shows an ECS placement wait on the active node until the task starts", () => {
    const waiting = describeEcsStatus({
      state: "waiting-for-capacity",
      devboxId: "r1-d3",
      reason: "RESOURCE:MEMORY",
      attempt: 2,
      retryInMs: 4000,
    });
    expect(waiting).toBe("waiting for capacity (RESOURCE:MEMORY); retry 2 in 4 s");
    expect(
      describeEcsStatus({ state: "started", devboxId: "r1-d3", taskArn: "arn:task" }),
    ).toBeUndefined();

    const sim = new SimulatedRun(
      definitionOf(
        workflowOf(
          "version: 1\nname: t\non: { label: go }\nnodes:\n  build: { kind: run, run: make }\n",
        ),
      ),
      { pause: (effect) => effect.type === "devbox.claim" },
    ).start();
    const body = renderStatusComment(sim.definition, sim.snapshot, {
      devboxNotice: waiting as string,
    });
    expect(body).toContain(
      "Active node: **build**. DevBox: waiting for capacity (RESOURCE:MEMORY); retry 2 in 4 s.",
    );
    expect(renderStatusComment(sim.definition, sim.snapshot)).not.toContain("DevBox:");
  });
});
