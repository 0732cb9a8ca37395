import { expect, it } from "vitest";
import { SimulatedRun, definitionOf, workflowOf } from "./harness.js";

it("retrying a run that a status decision failed re-runs the node whose outcome it routed on", () => {
  let failing = true;
  const sim = new SimulatedRun(
    definitionOf(
      workflowOf(`version: 1
name: t
on: { label: go }
nodes:
  test: { kind: run, run: npm test }
  result: { kind: decision, evaluator: status }
edges:
  - { from: test, to: result }
  - { from: result, to: done, label: succeeded }
  - { from: result, to: failed, label: failed }
`),
    ),
    { exit: (request) => (request.command.type === "script" && failing ? 1 : 0) },
  ).start();
  expect(sim.snapshot.status).toBe("failed");
  expect(sim.snapshot.failedNode).toBe("test");
  failing = false;
  sim.send({ type: "run.retry", actor: "bob", at: sim.tick() });
  sim.drain();
  expect(sim.snapshot.status).toBe("succeeded");
  expect(sim.path).toEqual(["test:failed", "result:failed", "test:succeeded", "result:succeeded"]);
  expect(sim.snapshot.visits[2]?.attempt).toBe(2);
});
