import { describe, expect, it } from "vitest";
import type { Effect } from "../../src/engine/model.js";
import { definitionOf, workflowOf } from "../engine/harness.js";
import { useTestDynamo } from "../store/dynalite-fixture.js";
import { InstantWorld } from "../helpers/instant-world.js";

const dynamo = useTestDynamo();

const workflow = workflowOf(`version: 1
name: race
on: { label: go }
nodes:
  design:
    kind: prototype
    brief: Sketch it
    variants: [{ engine: claude }, { engine: codex }]
    select: first
  build: { kind: run, run: make }
edges:
  - { from: design, to: build }
`);

/** A world whose process dies as it is about to move the run branch: it performs nothing more. */
class CrashAtMove extends InstantWorld {
  attempted: Effect | undefined;

  override perform(runId: string, effect: Effect): Promise<unknown> {
    if (effect.type === "branch.move") this.attempted ??= effect;
    if (this.attempted !== undefined) return Promise.reject(new Error("crash"));
    return super.perform(runId, effect);
  }
}

async function waitFor(check: () => Promise<boolean>): Promise<void> {
  // Bounded by time, not by a count of tries: a loaded machine makes each try slower.
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error("condition not met in time");
}

describe("a crash at a race winner's move onto the run branch", () => {
  it("is resumed: the move is made once, under its key, before the next node's DevBox is claimed", async () => {
    const store = await dynamo.newStore();
    const crashing = new CrashAtMove({ store });
    await crashing.runtime.start(definitionOf(workflow, { runId: "moved" }), { repo: "acme/app" });
    await waitFor(() => Promise.resolve(crashing.errors.length > 0));
    const attempted = crashing.attempted;
    expect(attempted).toMatchObject({ branch: "clustercode/1-r1", from: "clustercode/1-r1-v1" });
    // The next node's claim waits behind the move in the outbox: nothing checked out the run
    // branch before the winner was on it.
    expect(
      crashing.performed.some(
        (e) => e.type === "devbox.claim" && e.spec.branch === "clustercode/1-r1",
      ),
    ).toBe(false);

    const healthy = new InstantWorld({ store });
    await healthy.runtime.reconcile("moved");
    await waitFor(async () => (await store.getRun("moved"))?.status === "succeeded");
    await healthy.runtime.idle();
    const moves = healthy.performed.filter((e) => e.type === "branch.move");
    expect(moves).toEqual([attempted]);
    const types = healthy.performed.map((e) => e.type);
    expect(types.indexOf("branch.move")).toBeLessThan(types.indexOf("devbox.claim"));
    const claim = healthy.performed.find((e) => e.type === "devbox.claim");
    expect(claim).toMatchObject({ spec: { branch: "clustercode/1-r1" } });
    expect((await healthy.runtime.load("moved"))?.document.state.branch).toBe("clustercode/1-r1");
  });
});
