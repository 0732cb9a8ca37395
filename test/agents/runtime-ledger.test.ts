import { describe, expect, it } from "vitest";
import { utcDay } from "../../src/engine/utc-day.js";
import { definitionOf, workflowOf } from "../engine/harness.js";
import { useTestDynamo } from "../store/dynalite-fixture.js";
import { InstantWorld } from "../helpers/instant-world.js";

const dynamo = useTestDynamo();

const fixer = workflowOf(`version: 1
name: fixer
on: { label: go }
nodes:
  fix:
    kind: loop
    goal: Make the tests pass.
    agent: { engine: claude, model: claude-sonnet-4-5 }
    gates: [{ name: tests, run: npm test }]
    budget: { max_iterations: 20, max_cost_per_iteration_usd: 3, max_daily_cost_usd: 10 }
`);

describe("the daily ledger through the runtime (dynalite)", () => {
  it("two concurrent runs on two runtimes share one ledger and overshoot it by at most one iteration", async () => {
    const store = await dynamo.newStore();
    const repo = "acme/app";
    const worlds = [0, 1].map(
      () =>
        new InstantWorld({
          store,
          repository: repo,
          cost: 2.5,
          exit: (request) => (request.command.type === "script" ? 1 : 0),
        }),
    );
    const started = Date.now();
    await Promise.all(
      worlds.map((world, i) =>
        world.runtime.start(definitionOf(fixer, { runId: `run${i}` }), { repo }),
      ),
    );
    const runs = await Promise.all(worlds.map((world, i) => world.settled(`run${i}`)));
    for (const world of worlds) expect(world.errors).toEqual([]);
    const days = [...new Set([utcDay(started), utcDay(Date.now())])];
    const totals = await Promise.all(days.map((day) => store.getCost(`${repo}#fixer`, day)));
    const total = totals.reduce((a, b) => a + b, 0);
    const spent = runs.reduce((sum, run) => sum + run.state.costUsd, 0);
    expect(total).toBe(spent);
    expect(total).toBeGreaterThanOrEqual(10);
    expect(total).toBeLessThanOrEqual(10 + 2.5);
    for (const run of runs) {
      expect(run.state.visits[0]).toMatchObject({ outcome: "exhausted" });
      expect(run.state.visits[0]?.reason).toMatch(/^max_daily_cost_usd \(\$10\) reached/);
    }
    // Both runs worked: the budget was shared, not taken by whichever started first.
    expect(runs.every((run) => run.state.costUsd > 0)).toBe(true);
  });
});
