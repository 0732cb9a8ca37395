import { expect, it } from "vitest";
import { SimulatedRun, definitionOf, workflowOf } from "./harness.js";

it("a re-entered prototype races on fresh, numbered branches named from the run branch", () => {
  let tests = 0;
  const sim = new SimulatedRun(
    definitionOf(
      workflowOf(`version: 1
name: t
on: { label: go }
nodes:
  design:
    kind: prototype
    brief: Sketch it
    variants: [{ engine: claude }, { engine: codex }]
    gates: [{ name: ok, run: test -s DESIGN.md }]
    select: first
  test: { kind: run, run: npm test }
  result: { kind: decision, evaluator: status }
edges:
  - { from: design, to: test }
  - { from: test, to: result }
  - { from: result, to: done, label: succeeded }
  - { from: result, to: design, label: failed, back: true, max_traversals: 2 }
`),
    ),
    // npm test fails twice, so the prototype runs three races.
    {
      exit: (request) =>
        request.command.type === "script" && request.command.script === "npm test" && tests++ < 2
          ? 1
          : 0,
    },
  ).start();
  expect(sim.snapshot.status).toBe("succeeded");
  const claimed = sim.effects.flatMap((e) => (e.type === "devbox.claim" ? [e.spec] : []));
  expect(claimed.map((spec) => [spec.branch, spec.baseBranch])).toEqual([
    ["clustercode/1-r1-v1", "main"],
    ["clustercode/1-r1-v2", "main"],
    // After each race, the next node's DevBox checks out the run branch.
    ["clustercode/1-r1", "clustercode/1-r1"],
    // Each later race starts from the run branch, onto which the last winner was moved.
    ["clustercode/1-r1-race2-v1", "clustercode/1-r1"],
    ["clustercode/1-r1-race2-v2", "clustercode/1-r1"],
    ["clustercode/1-r1", "clustercode/1-r1"],
    ["clustercode/1-r1-race3-v1", "clustercode/1-r1"],
    ["clustercode/1-r1-race3-v2", "clustercode/1-r1"],
    ["clustercode/1-r1", "clustercode/1-r1"],
  ]);
  // Each winner's head was moved onto the run branch, whose name never changed.
  const moves = sim.effects.flatMap((e) => (e.type === "branch.move" ? [[e.branch, e.from]] : []));
  expect(moves).toEqual([
    ["clustercode/1-r1", "clustercode/1-r1-v1"],
    ["clustercode/1-r1", "clustercode/1-r1-race2-v1"],
    ["clustercode/1-r1", "clustercode/1-r1-race3-v1"],
  ]);
  expect(sim.snapshot.branch).toBe("clustercode/1-r1");
});
