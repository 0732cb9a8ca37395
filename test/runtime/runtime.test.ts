import { describe, expect, it } from "vitest";
import type { Effect, RunEvent } from "../../src/engine/model.js";
import { definitionOf, workflowOf } from "../engine/harness.js";
import { useTestDynamo } from "../store/dynalite-fixture.js";
import { InstantWorld } from "../helpers/instant-world.js";

const dynamo = useTestDynamo();

const workflow = workflowOf(`version: 1
name: chain
on: { label: go }
nodes:
  a: { kind: run, run: a }
  b: { kind: run, run: b }
  ok: { kind: approval }
  c: { kind: run, run: c }
edges:
  - { from: a, to: b }
  - { from: b, to: ok }
  - { from: ok, to: c, label: approved }
`);

async function waitFor(check: () => Promise<boolean>): Promise<void> {
  // Bounded by time, not by a count of tries: a loaded machine makes each try slower.
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error("condition not met in time");
}

describe("runtime", () => {
  it("drives a run through the store with two write requests per transition", async () => {
    const requests: string[] = [];
    const store = await dynamo.newStore({ onRequest: (name) => requests.push(name) });
    const world = new InstantWorld({ store });
    const runtime = world.runtime;
    const definition = definitionOf(workflow, { runId: "run1" });
    await runtime.start(definition, { repo: "acme/app" });
    await waitFor(async () => (await store.getRun("run1"))?.status === "awaiting_input");
    await runtime.idle();
    const stored = await store.getRun("run1");
    const transitions = (stored?.version ?? 0) - 1;
    const writes = requests.filter((name) =>
      ["PutItem", "BatchWriteItem", "UpdateItem", "DeleteItem"].includes(name),
    );
    // createRun is one extra write; timers are part of the effects of their transition.
    expect(writes.length - 1).toBeLessThanOrEqual(
      2 * transitions + world.performed.filter((e) => e.type.startsWith("timer")).length,
    );
    const evidence = await store.listEvidence("run1");
    expect(evidence.map((record) => record.seq)).toEqual(evidence.map((_, index) => index + 1));
    const owed = (stored?.outbox as Effect[]).filter((effect) => effect.type !== "evidence");
    const receipts = await store.getReceipts(
      "run1",
      owed.map((effect) => effect.seq),
    );
    expect(owed.length).toBeGreaterThan(0);
    expect(receipts.size).toBe(owed.length);
    // So a process picking the run up again performs none of its latest effects twice.
    const restarted = new InstantWorld({ store });
    await restarted.runtime.reconcile("run1");
    expect(restarted.performed).toEqual([]);
  });

  it("keeps a finished run listed for recovery until its host has shown its end", async () => {
    const store = await dynamo.newStore();
    let shown!: () => void;
    const showing = new Promise<void>((resolve) => (shown = resolve));
    const asked: string[] = [];
    const world = new InstantWorld({
      store,
      beforeOutboxCleared: (runId) => {
        asked.push(runId);
        return showing;
      },
    });
    const short = workflowOf(`version: 1
name: short
on: { label: go }
nodes:
  a: { kind: run, run: a }
edges:
  - { from: a, to: done }
`);
    await world.runtime.start(definitionOf(short, { runId: "short1" }), { repo: "acme/app" });
    await waitFor(() => Promise.resolve(asked.includes("short1")));
    expect((await store.getRun("short1"))?.status).toBe("succeeded");
    // A crash now would leave its surfaces stale: recovery must still find the run.
    const owing = async () =>
      (await store.listActiveRunHeads({ owing: true })).map((head) => head.runId);
    expect(await owing()).toContain("short1");
    shown();
    await world.runtime.idle();
    expect(await owing()).not.toContain("short1");
  });

  it("two runtimes racing on one event: exactly one applies it", async () => {
    const store = await dynamo.newStore();
    const first = new InstantWorld({ store });
    const second = new InstantWorld({ store });
    const runtimeA = first.runtime;
    const runtimeB = second.runtime;
    await runtimeA.start(definitionOf(workflow, { runId: "race" }), { repo: "acme/app" });
    await waitFor(async () => (await store.getRun("race"))?.status === "awaiting_input");
    await runtimeA.idle();
    const approve: RunEvent = {
      type: "approval.answer",
      decision: "approved",
      actor: "bob",
      at: Date.now(),
    };
    const results = await Promise.all([
      runtimeA.deliver("race", approve),
      runtimeB.deliver("race", approve),
    ]);
    expect(results.filter((result) => result.applied)).toHaveLength(1);
    // The loser reads the run after the winner's write: the approval is gone, or (the winner's
    // runtime being quick) the run has already ended.
    const loser = results.find((result) => !result.applied);
    expect(loser?.refused?.code).toBe("not-applicable");
    expect(loser?.refused?.message).toMatch(
      /^(no approval is waiting in this run|the run has already ended)/,
    );
    await waitFor(async () => (await store.getRun("race"))?.status === "succeeded");
    // The evidence of a transition is written after its snapshot, off the transition's path.
    await Promise.all([runtimeA.idle(), runtimeB.idle()]);
    const evidence = await store.listEvidence("race");
    expect(
      evidence.filter((record) => (record.entry as { kind: string }).kind === "approval.answered"),
    ).toHaveLength(1);
  });

  it("after a crash mid-effects, reconcile performs only what has no receipt", async () => {
    const store = await dynamo.newStore();
    const crashing = new InstantWorld({ store });
    crashing.crashAt = 2;
    const runtime = crashing.runtime;
    await expect(
      runtime.start(definitionOf(workflow, { runId: "crash" }), { repo: "acme/app" }),
    ).rejects.toThrow("crash");
    const stored = await store.getRun("crash");
    const outbox = stored?.outbox as Effect[];
    expect(outbox.length).toBeGreaterThan(0);
    expect(
      (
        await store.getReceipts(
          "crash",
          outbox.map((effect) => effect.seq),
        )
      ).size,
    ).toBe(0);

    const healthy = new InstantWorld({ store });
    const restarted = healthy.runtime;
    await restarted.reconcile("crash");
    const redone = healthy.performed.map((effect) => effect.seq);
    expect(redone).toEqual(
      outbox.filter((effect) => effect.type !== "evidence").map((effect) => effect.seq),
    );
    await waitFor(async () => (await store.getRun("crash"))?.status === "awaiting_input");
    await restarted.idle();
    const evidence = await store.listEvidence("crash");
    expect(new Set(evidence.map((record) => record.seq)).size).toBe(evidence.length);
    expect(evidence.map((record) => record.seq)).toEqual(evidence.map((_, index) => index + 1));
  });
});
