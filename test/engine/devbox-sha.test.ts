import { describe, expect, it } from "vitest";
import type { Effect } from "../../src/engine/model.js";
import { MAX_STALE_STARTS } from "../../src/engine/devbox-sha.js";
import { SimulatedRun, definitionOf, workflowOf } from "./harness.js";

const ofType = <T extends Effect["type"]>(effects: Effect[], type: T) =>
  effects.filter((effect): effect is Extract<Effect, { type: T }> => effect.type === type);

// `build` checkpoints; the approval lets its DevBox go; `deploy` claims a fresh one, which must
// start on build's checkpoint.
const WORKFLOW = `version: 1
name: t
on: { label: go }
nodes:
  build: { kind: run, run: make }
  ship: { kind: approval }
  deploy: { kind: run, run: ./deploy }
edges:
  - { from: build, to: ship }
  - { from: ship, to: deploy, label: approved }
  - { from: ship, to: failed, label: rejected }
`;

/** A run paused at deploy's claim: the claim waits for the test's `devbox.ready`. */
function atDeployClaim() {
  let claims = 0;
  const sim = new SimulatedRun(definitionOf(workflowOf(WORKFLOW)), {
    pause: (effect) => effect.type === "devbox.claim" && claims++ > 0,
  }).start();
  sim.send({ type: "approval.answer", decision: "approved", actor: "bob", at: sim.tick() });
  sim.drain();
  const claim = ofType(sim.effects, "devbox.claim").at(-1)!;
  return { sim, claim };
}

describe("a DevBox starts on the run's last checkpoint and nothing else", () => {
  it("the claim carries the last checkpoint; a ready on it starts the node's work", () => {
    const { sim, claim } = atDeployClaim();
    expect(sim.snapshot.lastSha).toBeDefined();
    expect(claim.spec.sha).toBe(sim.snapshot.lastSha);
    const effects = sim.send({
      type: "devbox.ready",
      devboxId: claim.devboxId,
      ok: true,
      sha: sim.snapshot.lastSha!,
      at: sim.tick(),
    });
    const [dispatch] = ofType(effects, "command.dispatch");
    expect(dispatch?.request.command).toEqual({ type: "script", script: "./deploy" });
  });

  it("a ready on an older commit is refused: the DevBox is released and another claimed", () => {
    const { sim, claim } = atDeployClaim();
    const expected = sim.snapshot.lastSha!;
    const effects = sim.send({
      type: "devbox.ready",
      devboxId: claim.devboxId,
      ok: true,
      sha: "previous-round-commit",
      at: sim.tick(),
    });
    expect(ofType(effects, "command.dispatch")).toEqual([]);
    expect(ofType(effects, "devbox.release").map((e) => e.devboxId)).toEqual([claim.devboxId]);
    const [again] = ofType(effects, "devbox.claim");
    expect(again?.devboxId).not.toBe(claim.devboxId);
    expect(again?.spec.sha).toBe(expected);
    const stale = ofType(effects, "evidence").find((e) => e.entry.kind === "devbox.stale");
    expect(stale?.entry).toMatchObject({ expected, sha: "previous-round-commit", tries: 1 });
    expect(sim.snapshot.status).toBe("running");
    // The old DevBox's late answers change nothing; the new one, on the right commit, works.
    const late = sim.send({
      type: "devbox.ready",
      devboxId: claim.devboxId,
      ok: true,
      sha: expected,
      at: sim.tick(),
    });
    expect(late).toEqual([]);
    const work = sim.send({
      type: "devbox.ready",
      devboxId: again!.devboxId,
      ok: true,
      sha: expected,
      at: sim.tick(),
    });
    expect(ofType(work, "command.dispatch")).toHaveLength(1);
  });

  it(`fails the node, saying why, after ${MAX_STALE_STARTS} DevBoxes in a row on the wrong commit`, () => {
    const { sim, claim } = atDeployClaim();
    let devboxId = claim.devboxId;
    for (let i = 1; i < MAX_STALE_STARTS; i++) {
      const effects = sim.send({
        type: "devbox.ready",
        devboxId,
        ok: true,
        sha: "old",
        at: sim.tick(),
      });
      devboxId = ofType(effects, "devbox.claim")[0]!.devboxId;
    }
    const last = sim.send({ type: "devbox.ready", devboxId, ok: true, sha: "old", at: sim.tick() });
    expect(ofType(last, "devbox.claim")).toEqual([]);
    expect(ofType(last, "devbox.release").map((e) => e.devboxId)).toEqual([devboxId]);
    expect(sim.snapshot.status).toBe("failed");
    const visit = sim.snapshot.visits.at(-1);
    expect(visit).toMatchObject({ node: "deploy", outcome: "failed" });
    expect(visit?.reason).toContain("not on the run's last checkpoint");
    expect(visit?.reason).toContain(`${MAX_STALE_STARTS} DevBoxes in a row`);
  });

  it("the first DevBox of a run, before any checkpoint, is not held to a commit", () => {
    const sim = new SimulatedRun(definitionOf(workflowOf(WORKFLOW)), {
      pause: (effect) => effect.type === "devbox.claim",
    }).start();
    const [claim] = ofType(sim.effects, "devbox.claim");
    expect(claim?.spec.sha).toBeUndefined();
    const effects = sim.send({
      type: "devbox.ready",
      devboxId: claim!.devboxId,
      ok: true,
      sha: "base",
      at: sim.tick(),
    });
    expect(ofType(effects, "command.dispatch")).toHaveLength(1);
  });
});
