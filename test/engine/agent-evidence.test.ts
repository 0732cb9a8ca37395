import { describe, expect, it } from "vitest";
import type { EvidenceEntry } from "../../src/engine/model.js";
import { SimulatedRun, definitionOf, workflowOf } from "./harness.js";

const evidence = (sim: SimulatedRun, kind: string): EvidenceEntry[] =>
  sim.effects.flatMap((e) => (e.type === "evidence" && e.entry.kind === kind ? [e.entry] : []));

describe("agent evidence", () => {
  it("records engine, model, exit status, duration, cost and tokens of each agent turn", () => {
    const workflow = workflowOf(`version: 1
name: one
on: { label: go }
nodes:
  write: { kind: run, agent: { engine: codex, model: gpt-5-codex }, prompt: Write it. }
`);
    const sim = new SimulatedRun(definitionOf(workflow), {
      pause: (e) => e.type === "command.dispatch",
    });
    sim.start();
    const dispatch = sim.effects.find((e) => e.type === "command.dispatch");
    if (dispatch?.type !== "command.dispatch") throw new Error("no dispatch");
    sim.send({
      type: "command.finished",
      devboxId: dispatch.devboxId,
      at: sim.tick(),
      result: {
        commandId: dispatch.request.commandId,
        exitCode: 0,
        output: "done",
        durationMs: 61_000,
        usage: { inputTokens: 24763, outputTokens: 122, cachedInputTokens: 24448 },
      },
    });
    expect(evidence(sim, "command.finished")[0]).toMatchObject({
      node: "write",
      engine: "codex",
      model: "gpt-5-codex",
      exitCode: 0,
      durationMs: 61_000,
      usage: { inputTokens: 24763, outputTokens: 122, cachedInputTokens: 24448 },
    });
    // Codex reported no cost, so none is recorded.
    expect(evidence(sim, "command.finished")[0]).not.toHaveProperty("costUsd");
  });

  it("records what cleaning the brief removed, and nothing when the brief was clean", () => {
    const workflow = workflowOf(`version: 1
name: one
on: { label: go }
nodes:
  build: { kind: run, run: make }
`);
    const removed = { htmlComments: 2, zeroWidth: 5, bidiControls: 0, tagCharacters: 0 };
    const dirty = new SimulatedRun(definitionOf(workflow, { briefCleaned: removed })).start();
    expect(evidence(dirty, "brief.cleaned")).toEqual([
      expect.objectContaining({ removed }) as unknown,
    ]);
    const clean = new SimulatedRun(
      definitionOf(workflow, {
        briefCleaned: { htmlComments: 0, zeroWidth: 0, bidiControls: 0, tagCharacters: 0 },
      }),
    ).start();
    expect(evidence(clean, "brief.cleaned")).toEqual([]);
  });

  it("a prototype's variant table has engine, model, duration, cost, gates and verdict", () => {
    const workflow = workflowOf(`version: 1
name: race
on: { label: go }
nodes:
  p:
    kind: prototype
    brief: Do it.
    variants:
      - { engine: claude, model: claude-sonnet-4-5 }
      - { engine: codex, model: gpt-5-codex }
    gates: [{ name: lint, run: npm run lint }, { name: tests, run: npm test }]
    select: first
`);
    const branchOf = (devboxId: string) =>
      sim.effects.flatMap((e) =>
        e.type === "devbox.claim" && e.devboxId === devboxId ? [e.spec.branch] : [],
      )[0];
    // Variant 1's tests fail; variant 2 passes both gates.
    const sim: SimulatedRun = new SimulatedRun(definitionOf(workflow), {
      cost: 0.75,
      exit: (request, devboxId) =>
        request.command.type === "script" &&
        request.command.script === "npm test" &&
        branchOf(devboxId)?.endsWith("-v1") === true
          ? 1
          : 0,
    });
    sim.start();
    const [table] = evidence(sim, "prototype.variants");
    expect(table?.variants).toEqual([
      {
        variant: 1,
        engine: "claude",
        model: "claude-sonnet-4-5",
        durationMs: 30,
        costUsd: 0.75,
        gates: [
          { name: "lint", exitCode: 0 },
          { name: "tests", exitCode: 1 },
        ],
        verdict: "failed",
      },
      {
        variant: 2,
        engine: "codex",
        model: "gpt-5-codex",
        durationMs: 40,
        costUsd: 0.75,
        gates: [
          { name: "lint", exitCode: 0 },
          { name: "tests", exitCode: 0 },
        ],
        verdict: "won",
      },
    ]);
    // The winner's commits are moved onto the run branch, whose name never changes.
    expect(sim.snapshot.branch).toBe("clustercode/1-r1");
  });
});
