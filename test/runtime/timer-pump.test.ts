import { describe, expect, it } from "vitest";
import type { Effect } from "../../src/engine/model.js";
import type { EffectPerformer } from "../../src/runtime/effects.js";
import { Runtime } from "../../src/runtime/runtime.js";
import { TimerPump } from "../../src/runtime/timer-pump.js";
import type { Store } from "../../src/store/store.js";
import { definitionOf, workflowOf } from "../engine/harness.js";
import { useTestDynamo } from "../store/dynalite-fixture.js";

const dynamo = useTestDynamo();

const workflow = workflowOf(`version: 1
name: wait
on: { label: go }
nodes:
  ship: { kind: approval, timeout: 1h, on_timeout: rejected }
edges:
  - { from: ship, to: failed, label: rejected }
`);

/** Performs timer effects in the store, nothing else (the workflow claims no DevBox). */
function timersOnly(store: Store): EffectPerformer {
  return {
    async perform(runId: string, effect: Effect) {
      if (effect.type === "timer.set")
        await store.putTimer({ runId, timerId: effect.timerId, dueAt: effect.dueAt });
      if (effect.type === "timer.cancel") await store.deleteTimer(runId, effect.timerId);
      return null;
    },
  };
}

describe("timer pump", () => {
  it("fires a due timer once however many pumps run, and keeps it when delivering fails", async () => {
    const store = await dynamo.newStore();
    let clock = 1_000_000;
    const now = () => clock;
    const runtime = new Runtime({ store, performer: timersOnly(store), now });
    await runtime.start(definitionOf(workflow, { runId: "t1" }), { repo: "acme/app" });
    expect((await store.getRun("t1"))?.status).toBe("awaiting_input");

    clock += 2 * 3_600_000;
    // A pump whose runtime cannot write (a crash, a throttled store) must not lose the timer.
    const failing = Object.create(store) as Store;
    failing.getRun = () => Promise.reject(new Error("store down"));
    const broken = new Runtime({ store: failing, performer: timersOnly(store), now });
    await expect(new TimerPump({ store, runtime: broken, now }).tick()).rejects.toThrow(
      "store down",
    );
    expect((await store.dueTimers(clock)).map((timer) => timer.timerId)).toContain("approval:0");

    const other = new Runtime({ store, performer: timersOnly(store), now });
    await Promise.all([
      new TimerPump({ store, runtime, now }).tick(),
      new TimerPump({ store, runtime: other, now }).tick(),
    ]);
    // Evidence is written just after each transition: wait for it before reading.
    await Promise.all([runtime.idle(), other.idle()]);
    const run = await store.getRun("t1");
    expect(run?.status).toBe("failed");
    const kinds = (await store.listEvidence("t1")).map(
      (record) => (record.entry as { kind: string }).kind,
    );
    expect(kinds.filter((kind) => kind === "approval.timed_out")).toHaveLength(1);
    expect(await store.dueTimers(clock)).toEqual([]);
  });
});
