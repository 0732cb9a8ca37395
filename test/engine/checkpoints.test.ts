import { describe, expect, it } from "vitest";
import type { Effect } from "../../src/engine/model.js";
import { SimulatedRun, definitionOf, workflowOf } from "./harness.js";

const LOOP = workflowOf(`version: 1
name: fixer
on: { label: go }
budget: { max_cost_usd: 5, wall_clock: 2h }
nodes:
  fix:
    kind: loop
    goal: Make the tests pass.
    agent: { engine: claude }
    gates: [{ name: tests, run: npm test }]
    budget: { max_iterations: 10 }
    timeout: 30m
`);

/** The effects that matter to a stop, in order, as short strings. */
function story(effects: Effect[]): string[] {
  return effects.flatMap((e) => {
    if (e.type === "command.interrupt") return [`interrupt ${e.commandId}`];
    if (e.type === "devbox.release") return [`release ${e.devboxId}`];
    if (e.type === "command.dispatch" && e.request.command.type === "checkpoint") {
      return [`checkpoint "${e.request.command.message}"`];
    }
    return [];
  });
}

const isAgentTurn = (e: Effect) =>
  e.type === "command.dispatch" && e.request.command.type === "agent";
const agentTurnIds = (sim: SimulatedRun) =>
  sim.effects.flatMap((e) =>
    e.type === "command.dispatch" && e.request.command.type === "agent"
      ? [e.request.commandId]
      : [],
  );

describe("a stopped container node checkpoints before its DevBox is released", () => {
  it("on its timeout: interrupts the running command, commits and pushes, then releases", () => {
    const sim = new SimulatedRun(definitionOf(LOOP), { pause: isAgentTurn }).start();
    const turn = agentTurnIds(sim)[0];
    const effects = sim.send({ type: "timer.fired", timerId: "timeout:0:1", at: sim.tick() });
    expect(story(effects)).toEqual([
      `interrupt ${turn}`,
      'checkpoint "clustercode: checkpoint fix (timed out)"',
    ]);
    sim.drain();
    expect(story(sim.effects)).toEqual([
      `interrupt ${turn}`,
      'checkpoint "clustercode: checkpoint fix (timed out)"',
      "release d5",
    ]);
    expect(sim.snapshot).toMatchObject({
      status: "failed",
      reason: "fix timed_out",
      branchPushed: true,
    });
    expect(sim.snapshot.lastSha).toMatch(/^sha-c/);
    expect(sim.snapshot.visits[0]).toMatchObject({
      outcome: "timed_out",
      reason: "node timeout reached",
    });
    // The interrupted turn's late result changes nothing.
    sim.send({
      type: "command.finished",
      devboxId: "d5",
      result: { commandId: turn!, exitCode: 143, output: "", durationMs: 1 },
      at: sim.tick(),
    });
    expect(sim.refusals).toEqual(["the run has already ended (failed)"]);
  });

  it("on the run's budget: checkpoints the work of the turn that crossed it, then ends the run", () => {
    const sim = new SimulatedRun(definitionOf(LOOP), {
      exit: (request) => (request.command.type === "script" ? 1 : 0),
      cost: 2,
    }).start();
    expect(story(sim.effects)).toEqual([
      'checkpoint "clustercode: checkpoint fix (run budget exceeded)"',
      "release d5",
    ]);
    expect(sim.snapshot).toMatchObject({
      status: "failed",
      reason: "run budget exceeded: spent $6.00 of $5",
      failedNode: "fix",
      branchPushed: true,
    });
  });

  it("on the run's wall clock: interrupts, checkpoints, then ends the run failed", () => {
    const sim = new SimulatedRun(definitionOf(LOOP), { pause: isAgentTurn }).start();
    sim.send({ type: "timer.fired", timerId: "run:wall-clock", at: sim.tick() });
    sim.drain();
    expect(story(sim.effects)).toEqual([
      `interrupt ${agentTurnIds(sim)[0]}`,
      'checkpoint "clustercode: checkpoint fix (run wall clock exceeded)"',
      "release d5",
    ]);
    expect(sim.snapshot).toMatchObject({
      status: "failed",
      reason: "run wall clock exceeded",
      failedNode: "fix",
    });
  });

  it("gives the checkpoint ten minutes, then releases the DevBox without it", () => {
    const sim = new SimulatedRun(definitionOf(LOOP), {
      pause: (e) => e.type === "command.dispatch",
    }).start();
    sim.send({ type: "timer.fired", timerId: "timeout:0:1", at: sim.tick() });
    expect(sim.snapshot.timers).toHaveProperty(["checkpoint:0:1"]);
    expect(sim.snapshot.timers).not.toHaveProperty(["timeout:0:1"]);
    sim.send({ type: "timer.fired", timerId: "checkpoint:0:1", at: sim.tick(600_000) });
    expect(story(sim.effects).at(-1)).toBe("release d5");
    expect(sim.snapshot).toMatchObject({ status: "failed", branchPushed: false });
    const kinds = sim.effects.flatMap((e) => (e.type === "evidence" ? [e.entry.kind] : []));
    expect(kinds).toContain("checkpoint.abandoned");
  });

  it("a wall clock that runs out while a timed-out node checkpoints ends the run after it", () => {
    const sim = new SimulatedRun(definitionOf(LOOP), {
      pause: (e) => e.type === "command.dispatch",
    }).start();
    sim.send({ type: "timer.fired", timerId: "timeout:0:1", at: sim.tick() });
    sim.send({ type: "timer.fired", timerId: "run:wall-clock", at: sim.tick() });
    const checkpoint = sim.effects.findLast(
      (e) => e.type === "command.dispatch" && e.request.command.type === "checkpoint",
    );
    if (checkpoint?.type !== "command.dispatch") throw new Error("no checkpoint");
    sim.send({
      type: "command.finished",
      devboxId: "d5",
      result: {
        commandId: checkpoint.request.commandId,
        exitCode: 0,
        output: "",
        durationMs: 1,
        sha: "s1",
      },
      at: sim.tick(),
    });
    expect(story(sim.effects).filter((line) => line.startsWith("checkpoint"))).toHaveLength(1);
    expect(sim.snapshot).toMatchObject({
      status: "failed",
      reason: "run wall clock exceeded",
      lastSha: "s1",
    });
  });
});

describe("a stopped prototype checkpoints each variant at work on its own branch", () => {
  const workflow = workflowOf(`version: 1
name: race
on: { label: go }
nodes:
  design:
    kind: prototype
    brief: Sketch it
    variants: [{ engine: claude }, { engine: codex }]
    gates: [{ name: ok, run: test -s DESIGN.md }]
    select: first
    timeout: 1h
`);

  it("on its timeout: interrupts each variant, checkpoints it, releases it, then times out", () => {
    const sim = new SimulatedRun(definitionOf(workflow), { pause: isAgentTurn }).start();
    const turns = agentTurnIds(sim);
    expect(turns).toHaveLength(2);
    sim.send({ type: "timer.fired", timerId: "timeout:0:1", at: sim.tick() });
    sim.drain();
    const claimed = sim.effects.flatMap((e) => (e.type === "devbox.claim" ? [e.devboxId] : []));
    expect(story(sim.effects)).toEqual([
      `interrupt ${turns[0]}`,
      'checkpoint "clustercode: checkpoint design variant 1 (timed out)"',
      `interrupt ${turns[1]}`,
      'checkpoint "clustercode: checkpoint design variant 2 (timed out)"',
      `release ${claimed[0]}`,
      `release ${claimed[1]}`,
    ]);
    const saved = sim.effects.flatMap((e) =>
      e.type === "evidence" && e.entry.kind === "variant.checkpoint" ? [e.entry.branch] : [],
    );
    expect(saved).toEqual(["clustercode/1-r1-v1", "clustercode/1-r1-v2"]);
    expect(sim.snapshot).toMatchObject({ status: "failed", reason: "design timed_out" });
  });
});
