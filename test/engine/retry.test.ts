import { describe, expect, it } from "vitest";
import type { Effect } from "../../src/engine/model.js";
import { SimulatedRun, definitionOf, workflowOf, type World } from "./harness.js";

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

/** A one-loop workflow with the given loop budget (and run-level lines in `extra`). */
function loopWorkflow(budget: string, extra = "") {
  return workflowOf(`version: 1
name: fixer
on: { label: go }
${extra}
nodes:
  fix:
    kind: loop
    goal: Make the tests pass.
    agent: { engine: claude, model: claude-sonnet-4-5 }
    gates: [{ name: tests, run: npm test }]
    budget: ${budget}
`);
}

const agentTurns = (effects: Effect[]) =>
  effects.filter((e) => e.type === "command.dispatch" && e.request.command.type === "agent");
const entries = (effects: Effect[], kind: string) =>
  effects.flatMap((e) => (e.type === "evidence" && e.entry.kind === kind ? [e.entry] : []));
const failTests: World["exit"] = (request) =>
  request.command.type === "script" && request.command.script === "npm test" ? 1 : 0;

describe("retry keeps budgets", () => {
  it("does not run an exhausted loop again without --reset-budget, and says why", () => {
    const sim = new SimulatedRun(definitionOf(loopWorkflow("{ max_iterations: 3 }")), {
      exit: failTests,
    }).start();
    expect(sim.snapshot).toMatchObject({ status: "failed", reason: "fix exhausted" });
    expect(agentTurns(sim.effects)).toHaveLength(3);
    const before = sim.snapshot;
    const effects = sim.send({ type: "run.retry", actor: "bob", at: sim.tick() });
    expect(sim.refusals).toEqual([
      "loop fix used all 3 iterations; retry with --reset-budget to give it a fresh budget",
    ]);
    expect(effects).toEqual([]);
    expect(sim.snapshot).toBe(before);

    sim.send({
      type: "run.retry",
      actor: "bob",
      where: "comment-1",
      resetBudget: true,
      at: sim.tick(),
    });
    sim.drain();
    expect(agentTurns(sim.effects)).toHaveLength(6);
    expect(entries(sim.effects, "run.retried")).toEqual([
      expect.objectContaining({ node: "fix", attempt: 2, actor: "bob", resetBudget: true }),
    ]);
    expect(entries(sim.effects, "budget.reset")).toEqual([
      expect.objectContaining({
        node: "fix",
        actor: "bob",
        where: "comment-1",
        usedUp: ["loop fix used all 3 iterations"],
      }),
    ]);
    expect(sim.snapshot.visits.map((v) => [v.attempt, v.outcome, v.iterations])).toEqual([
      [1, "exhausted", 3],
      [2, "exhausted", 3],
    ]);
  });

  it("refuses a loop that an over-budget iteration stopped, with the loop's reason", () => {
    const sim = new SimulatedRun(
      definitionOf(loopWorkflow("{ max_iterations: 6, max_cost_per_iteration_usd: 3 }")),
      { exit: failTests, cost: 4 },
    ).start();
    sim.send({ type: "run.retry", actor: "bob", at: sim.tick() });
    expect(sim.refusals).toEqual([
      "loop fix ended exhausted: iteration 1 cost $4.00, over max_cost_per_iteration_usd ($3); retry with --reset-budget to give it a fresh budget",
    ]);
  });

  it("carries the iterations a failed loop used into the retry", () => {
    let tests = 0;
    let checkpoints = 0;
    const sim = new SimulatedRun(definitionOf(loopWorkflow("{ max_iterations: 5 }")), {
      exit: (request) => {
        if (request.command.type === "checkpoint") return checkpoints++ === 0 ? 1 : 0;
        // Iterations 1 and 2 fail their gate; 3 passes.
        return request.command.type === "script" && tests++ < 2 ? 1 : 0;
      },
    }).start();
    expect(sim.snapshot).toMatchObject({ status: "failed", failedNode: "fix" });
    tests = 1; // the retry's first iteration fails again, its second passes
    sim.send({ type: "run.retry", actor: "bob", at: sim.tick() });
    sim.drain();
    expect(sim.refusals).toEqual([]);
    expect(entries(sim.effects, "loop.iteration").map((e) => e.iteration)).toEqual([1, 2, 3, 4, 5]);
    expect(sim.snapshot.visits.map((v) => [v.outcome, v.iterations])).toEqual([
      ["failed", 3],
      ["succeeded", 5],
    ]);
  });

  it("keeps the run's wall clock: the retry's deadline is the run's first one", () => {
    const workflow = workflowOf(`version: 1
name: t
on: { label: go }
budget: { wall_clock: 1h }
nodes:
  test: { kind: run, run: npm test }
`);
    let failing = true;
    const sim = new SimulatedRun(definitionOf(workflow), {
      exit: () => (failing ? 1 : 0),
    });
    const startAt = sim.tick();
    sim.send({ type: "run.start", at: startAt });
    sim.drain();
    expect(sim.snapshot.status).toBe("failed");
    failing = false;
    const effects = sim.send({ type: "run.retry", actor: "bob", at: sim.tick(20 * 60_000) });
    expect(effects).toContainEqual(
      expect.objectContaining({
        type: "timer.set",
        timerId: "run:wall-clock",
        dueAt: startAt + 3_600_000,
      }),
    );
    sim.drain();
    expect(sim.snapshot.status).toBe("succeeded");
  });

  it("refuses a run whose wall clock ran out until --reset-budget gives it a new one", () => {
    const workflow = workflowOf(`version: 1
name: t
on: { label: go }
budget: { wall_clock: 1h }
nodes:
  test: { kind: run, run: npm test }
`);
    const sim = new SimulatedRun(definitionOf(workflow), {
      pause: (e) => e.type === "command.dispatch" && e.request.command.type === "script",
    }).start();
    sim.send({ type: "timer.fired", timerId: "run:wall-clock", at: sim.tick(3_600_000) });
    sim.drain();
    expect(sim.snapshot).toMatchObject({ status: "failed", reason: "run wall clock exceeded" });
    sim.send({ type: "run.retry", actor: "bob", at: sim.tick() });
    expect(sim.refusals.at(-1)).toBe(
      "the run used its 1h wall clock; retry with --reset-budget to give it a fresh budget",
    );
    const at = sim.tick();
    const effects = sim.send({ type: "run.retry", actor: "bob", resetBudget: true, at });
    expect(effects).toContainEqual(
      expect.objectContaining({
        type: "timer.set",
        timerId: "run:wall-clock",
        dueAt: at + 3_600_000,
      }),
    );
    expect(sim.snapshot.status).toBe("running");
  });

  it("refuses a run that spent its budget; --reset-budget counts spend from the retry", () => {
    const sim = new SimulatedRun(
      definitionOf(loopWorkflow("{ max_iterations: 10 }", "budget: { max_cost_usd: 5 }")),
      { exit: failTests, cost: 2 },
    ).start();
    expect(sim.snapshot.reason).toBe("run budget exceeded: spent $6.00 of $5");
    sim.send({ type: "run.retry", actor: "bob", at: sim.tick() });
    expect(sim.refusals.at(-1)).toBe(
      "the run spent $6.00 of its $5 budget; retry with --reset-budget to give it a fresh budget",
    );
    sim.send({ type: "run.retry", actor: "bob", resetBudget: true, at: sim.tick() });
    sim.drain();
    expect(sim.snapshot).toMatchObject({
      status: "failed",
      reason: "run budget exceeded: spent $6.00 of $5",
      costUsd: 12,
    });
    expect(agentTurns(sim.effects)).toHaveLength(6);
  });
});
