import { describe, expect, it } from "vitest";
import { useTestDynamo } from "./dynalite-fixture.js";

const dynamo = useTestDynamo();

describe("timers", () => {
  it("returns only the timers due by now, oldest first, across runs", async () => {
    const store = await dynamo.newStore();
    await store.putTimer({ runId: "r1", timerId: "approval", dueAt: 5_000 });
    await store.putTimer({ runId: "r2", timerId: "retry", dueAt: 1_000 });
    await store.putTimer({ runId: "r1", timerId: "exact", dueAt: 9_000 });
    await store.putTimer({ runId: "r3", timerId: "later", dueAt: 9_001 });
    await store.putTimer({ runId: "r3", timerId: "far", dueAt: 1_000_000_000_000 });
    expect(await store.dueTimers(9_000)).toEqual([
      { runId: "r2", timerId: "retry", dueAt: 1_000 },
      { runId: "r1", timerId: "approval", dueAt: 5_000 },
      { runId: "r1", timerId: "exact", dueAt: 9_000 },
    ]);
    expect(await store.dueTimers(9_000, 1)).toEqual([
      { runId: "r2", timerId: "retry", dueAt: 1_000 },
    ]);
    expect(await store.dueTimers(999)).toEqual([]);
  });

  it("reschedules a timer put again, and forgets a deleted one", async () => {
    const store = await dynamo.newStore();
    await store.putTimer({ runId: "r1", timerId: "t", dueAt: 1_000 });
    await store.putTimer({ runId: "r1", timerId: "t", dueAt: 50_000 });
    await store.putTimer({ runId: "r1", timerId: "gone", dueAt: 1_000 });
    await store.deleteTimer("r1", "gone");
    await store.deleteTimer("r1", "never-existed");
    expect(await store.dueTimers(10_000)).toEqual([]);
    expect(await store.dueTimers(50_000)).toEqual([{ runId: "r1", timerId: "t", dueAt: 50_000 }]);
  });

  it("lets exactly one of many concurrent claimers fire a timer", async () => {
    const store = await dynamo.newStore();
    const timer = { runId: "r1", timerId: "t", dueAt: 1_000 };
    await store.putTimer(timer);
    const claims = await Promise.all(Array.from({ length: 10 }, () => store.claimTimer(timer)));
    expect(claims.filter(Boolean)).toHaveLength(1);
    expect(await store.dueTimers(2_000)).toEqual([]);
    expect(await store.claimTimer(timer)).toBe(false);
  });

  it("does not let a stale claim take a timer that was rescheduled", async () => {
    const store = await dynamo.newStore();
    const listed = { runId: "r1", timerId: "t", dueAt: 1_000 };
    await store.putTimer(listed);
    await store.putTimer({ ...listed, dueAt: 60_000 });
    expect(await store.claimTimer(listed)).toBe(false);
    expect(await store.dueTimers(60_000)).toEqual([{ ...listed, dueAt: 60_000 }]);
  });

  it("finds due timers with one Query, not a scan", async () => {
    const requests: string[] = [];
    const store = await dynamo.newStore({ onRequest: (name) => requests.push(name) });
    await store.putTimer({ runId: "r1", timerId: "t", dueAt: 1_000 });
    requests.length = 0;
    await store.dueTimers(5_000);
    expect(requests).toEqual(["Query"]);
  });
});
