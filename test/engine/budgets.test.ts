import { describe, expect, it } from "vitest";
import type { CommandRequest } from "../../src/engine/commands.js";
import type { Effect } from "../../src/engine/model.js";
import { utcDay } from "../../src/engine/utc-day.js";
import { SimulatedRun, definitionOf, workflowOf, type World } from "./harness.js";

/** A loop whose gate always fails, so only a budget can stop it. */
function loop(budget: string, runBudget = "") {
  return workflowOf(`version: 1
name: fixer
on: { label: go }
${runBudget}
nodes:
  fix:
    kind: loop
    goal: Make the tests pass.
    agent: { engine: claude, model: claude-sonnet-4-5 }
    gates: [{ name: tests, run: npm test }]
    budget: ${budget}
`);
}

const failTests: World["exit"] = (request) =>
  request.command.type === "script" && request.command.script === "npm test" ? 1 : 0;

const agentTurns = (effects: Effect[]) =>
  effects.filter((e) => e.type === "command.dispatch" && e.request.command.type === "agent");
const ledgerAdds = (effects: Effect[]) =>
  effects.flatMap((e) => (e.type === "ledger.add" ? [e] : []));
const evidence = (sim: SimulatedRun, kind: string) =>
  sim.effects.flatMap((e) => (e.type === "evidence" && e.entry.kind === kind ? [e.entry] : []));

/** Each agent turn costs the next of `costs` (the last one repeats). */
function costs(...usd: number[]): (request: CommandRequest) => number {
  let turn = 0;
  return () => usd[Math.min(turn++, usd.length - 1)] ?? 0;
}

describe("max_cost_per_iteration_usd", () => {
  it("ends the loop exhausted after the iteration that went over, with the reason", () => {
    const workflow = loop("{ max_iterations: 6, max_cost_per_iteration_usd: 3 }");
    const sim = new SimulatedRun(definitionOf(workflow), {
      exit: failTests,
      cost: costs(2, 4, 1),
    }).start();
    expect(agentTurns(sim.effects)).toHaveLength(2);
    expect(sim.snapshot.visits[0]).toMatchObject({
      outcome: "exhausted",
      reason: "iteration 2 cost $4.00, over max_cost_per_iteration_usd ($3)",
      costUsd: 6,
    });
    // The iteration's work is checkpointed before the loop ends.
    expect(
      sim.effects.some(
        (e) => e.type === "command.dispatch" && e.request.command.type === "checkpoint",
      ),
    ).toBe(true);
    expect(evidence(sim, "budget.exhausted")).toEqual([
      expect.objectContaining({ budget: "max_cost_per_iteration_usd" }),
    ]);
    expect(sim.snapshot.status).toBe("failed");
  });

  it("lets an over-budget iteration whose gates pass succeed: the work is done", () => {
    const workflow = loop("{ max_iterations: 6, max_cost_per_iteration_usd: 3 }");
    const sim = new SimulatedRun(definitionOf(workflow), { cost: 5 }).start();
    expect(sim.path).toEqual(["fix:succeeded"]);
  });
});

describe("max_daily_cost_usd", () => {
  it("reserves each iteration in the daily ledger, settles it with the real cost, and stops before the iteration that would start over the budget", () => {
    const workflow = loop("{ max_iterations: 10, max_daily_cost_usd: 10 }");
    const sim = new SimulatedRun(definitionOf(workflow), { exit: failTests, cost: 4 }).start();
    // 0 → 4 → 8 → 12: the fourth iteration finds $12 spent and does not start.
    expect(agentTurns(sim.effects)).toHaveLength(3);
    const day = utcDay(sim.clock);
    expect(sim.ledger.get(`fixer@${day}`)).toBe(12);
    expect(ledgerAdds(sim.effects).map((e) => [e.usd, e.requestId !== undefined])).toEqual([
      [0, true], // first iteration: nothing to go by yet
      [4, false], // its real cost
      [4, true], // second: reserves what the last one cost, settled exactly (no add)
      [4, true],
      [4, true], // fourth: refused...
      [-4, false], // ...and its reservation returned
    ]);
    expect(sim.snapshot.visits[0]).toMatchObject({
      outcome: "exhausted",
      reason: "max_daily_cost_usd ($10) reached: $12.00 spent today by fixer",
    });
  });

  it("does not start at all when other runs spent today's budget", () => {
    const workflow = loop("{ max_iterations: 10, max_daily_cost_usd: 10 }");
    const definition = definitionOf(workflow);
    const ledger = new Map([[`fixer@${utcDay(1_001_000)}`, 10.5]]);
    const sim = new SimulatedRun(definition, { exit: failTests, cost: 1, ledger }).start();
    expect(agentTurns(sim.effects)).toHaveLength(0);
    expect(sim.snapshot.visits[0]?.reason).toMatch(/^max_daily_cost_usd \(\$10\) reached: \$10.50/);
  });

  it("keeps the ledger of the UTC day of the event", () => {
    const workflow = loop("{ max_iterations: 1, max_daily_cost_usd: 10 }");
    const ledger = new Map<string, number>();
    for (const [runId, at] of [
      ["r1", Date.UTC(2026, 11, 2, 23, 59, 58, 500)],
      ["r2", Date.UTC(2026, 11, 2, 23, 59, 59, 500)],
    ] as const) {
      const sim = new SimulatedRun(definitionOf(workflow, { runId }), { cost: 1, ledger });
      sim.clock = at;
      sim.start();
    }
    expect(ledger).toEqual(
      new Map([
        ["fixer@2026-12-02", 1],
        ["fixer@2026-12-03", 1],
      ]),
    );
  });

  it("two concurrent runs share one ledger and overshoot it by at most one iteration", () => {
    const workflow = loop(
      "{ max_iterations: 20, max_daily_cost_usd: 10, max_cost_per_iteration_usd: 3 }",
    );
    const ledger = new Map<string, number>();
    const runs = ["r1", "r2"].map(
      (runId) =>
        new SimulatedRun(definitionOf(workflow, { runId }), { exit: failTests, cost: 2.5, ledger }),
    );
    for (const run of runs) run.send({ type: "run.start", at: run.tick() });
    // Interleave the two runs one event at a time, as two runtimes would.
    for (let i = 0; i < 5_000 && runs.some((run) => run.queue.length > 0); i++) {
      for (const run of runs) {
        const event = run.queue.shift();
        if (event !== undefined) run.send(event);
      }
    }
    const total = [...ledger.values()].reduce((a, b) => a + b, 0);
    const spent = runs.reduce((sum, run) => sum + run.snapshot.costUsd, 0);
    expect(total).toBe(spent); // every reservation was settled or returned
    expect(total).toBeGreaterThanOrEqual(10);
    expect(total).toBeLessThanOrEqual(10 + 2.5);
    for (const run of runs) {
      expect(run.snapshot.visits[0]?.reason).toMatch(/^max_daily_cost_usd \(\$10\) reached/);
    }
  });

  it("ignores a ledger answer nobody waits for", () => {
    const workflow = loop("{ max_iterations: 3, max_daily_cost_usd: 10 }");
    const sim = new SimulatedRun(definitionOf(workflow), { cost: 1 }).start();
    sim.send({ type: "ledger.total", requestId: "l999", totalUsd: 0, at: sim.tick() });
    expect(sim.refusals.at(-1)).toBe("the run has already ended (succeeded)");
  });
});

describe("budget.max_cost_usd", () => {
  it("ends the run failed after the turn that crossed it, releasing the DevBox", () => {
    const workflow = loop("{ max_iterations: 10 }", "budget: { max_cost_usd: 5 }");
    const sim = new SimulatedRun(definitionOf(workflow), { exit: failTests, cost: 2 }).start();
    expect(agentTurns(sim.effects)).toHaveLength(3);
    expect(sim.snapshot).toMatchObject({
      status: "failed",
      reason: "run budget exceeded: spent $6.00 of $5",
      failedNode: "fix",
      costUsd: 6,
    });
    expect(sim.effects.at(-1)).toMatchObject({ type: "evidence" });
    expect(sim.effects.filter((e) => e.type === "devbox.release")).toHaveLength(1);
  });

  it("counts judge costs too", () => {
    const workflow = workflowOf(`version: 1
name: judged
on: { label: go }
budget: { max_cost_usd: 1 }
nodes:
  review:
    kind: decision
    evaluator: agent
    question: Ship it?
    judge: { provider: anthropic, model: claude-opus-4-1 }
edges:
  - { from: review, to: done, label: approved }
  - { from: review, to: failed, label: rejected }
`);
    const sim = new SimulatedRun(definitionOf(workflow), {
      pause: (e) => e.type === "judge.request",
    }).start();
    const request = sim.effects.find((e) => e.type === "judge.request");
    expect(request).toMatchObject({ branch: "clustercode/1-r1", baseBranch: "main" });
    sim.send({
      type: "judge.failed",
      requestId: request?.type === "judge.request" ? request.requestId : "",
      reason: "anthropic judge gave no valid verdict in 2 attempts",
      costUsd: 1.5,
      at: sim.tick(),
    });
    expect(sim.snapshot).toMatchObject({
      status: "failed",
      reason: "run budget exceeded: spent $1.50 of $1",
    });
  });
});

describe("utcDay", () => {
  it("agrees with Date on day boundaries across centuries and leap years", () => {
    const day = 86_400_000;
    const samples = [
      0,
      951_782_400_000,
      4_102_444_800_000,
      Date.UTC(2024, 1, 29),
      Date.UTC(2100, 1, 28),
    ];
    for (const at of samples.flatMap((t) => [t - 1, t, t + day - 1])) {
      expect(utcDay(at)).toBe(new Date(at).toISOString().slice(0, 10));
    }
    for (let at = Date.UTC(1999, 0, 1); at < Date.UTC(2031, 0, 1); at += 7 * day + 3_600_001) {
      expect(utcDay(at)).toBe(new Date(at).toISOString().slice(0, 10));
    }
  });
});
