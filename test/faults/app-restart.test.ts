import { describe, expect, it } from "vitest";
import type { DynamoStore } from "../../src/store/dynamo-store.js";
import { Replica, useReplicaTables } from "../e2e/replica-process.js";
import { runs } from "../fuzz/fuzz-size.js";
import { checkInvariants } from "./invariants.js";

const dynamo = useReplicaTables("restarts");
const newTable = () => dynamo.newTable();

/** Evidence kinds that happen once in a run that is started, approved once and finishes. */
async function onceEach(store: DynamoStore, runIds: string[]): Promise<string[]> {
  const problems: string[] = [];
  for (const runId of runIds) {
    const kinds = (await store.listEvidence(runId)).map(
      (record) => (record.entry as { kind: string }).kind,
    );
    for (const kind of ["run.started", "approval.answered", "run.finished"]) {
      const seen = kinds.filter((k) => k === kind).length;
      if (seen !== 1) problems.push(`${runId}: ${kind} ${seen} times`);
    }
  }
  return problems;
}

/**
 * Sends `op` for every run to `replica` without waiting, and SIGKILLs it once `after` of them
 * were answered: the rest are cut off somewhere between the store and their effects.
 */
async function killAfter(replica: Replica, op: string, runIds: string[], after: number) {
  let answered = 0;
  const enough = new Promise<void>((resolve) => {
    if (after === 0) resolve();
    for (const run of runIds) {
      void replica.ask({ op, run }).then(() => {
        if (++answered === after) resolve();
      });
    }
  });
  await enough;
  await replica.kill();
}

describe("an app replica SIGKILLed mid-work and started again", () => {
  it(
    "finishes every run once, wherever the kill fell",
    { timeout: runs(120_000, 900_000) },
    async () => {
      const cycles = runs(2, 12);
      for (let cycle = 0; cycle < cycles; cycle++) {
        const { table, store } = await newTable();
        const ids = Array.from({ length: 6 }, (_, i) => `c${cycle}r${i}`);
        // Killed after a different number of answers each cycle (none: before any landed).
        const first = new Replica(dynamo.endpoint, table, `a${cycle}`);
        await killAfter(first, "start", ids, cycle % ids.length);
        // Started again: it recovers what the dead one left, and GitHub's redeliveries of the
        // labels (the dead one never acknowledged some) start what was never created.
        const second = new Replica(dynamo.endpoint, table, `b${cycle}`);
        await second.ask({ op: "recover" });
        await Promise.all(ids.map((run) => second.ask({ op: "start", run })));
        expect(await second.ask({ op: "wait", runs: ids, status: "awaiting_input" })).toMatchObject(
          {
            ok: true,
          },
        );
        await killAfter(second, "approve", ids, (cycle * 2) % ids.length);
        const third = new Replica(dynamo.endpoint, table, `c${cycle}`);
        await third.ask({ op: "recover" });
        await Promise.all(ids.map((run) => third.ask({ op: "approve", run })));
        expect(await third.ask({ op: "wait", runs: ids, status: "succeeded" })).toMatchObject({
          ok: true,
        });
        await third.ask({ op: "idle" });
        expect(await onceEach(store, ids)).toEqual([]);
        expect(await checkInvariants({ store, runIds: ids })).toEqual([]);
        await third.stop();
      }
    },
  );

  it(
    "three replicas, each given every delivery, one killed mid-work",
    { timeout: runs(120_000, 300_000) },
    async () => {
      const { table, store } = await newTable();
      const replicas = ["a", "b", "c"].map((name) => new Replica(dynamo.endpoint, table, name));
      const [doomed, b, c] = replicas as [Replica, Replica, Replica];
      const alive = [b, c];
      const ids = Array.from({ length: runs(6, 30) }, (_, i) => `three${i}`);
      const survivors = Promise.all(
        alive.flatMap((replica) => ids.map((run) => replica.ask({ op: "start", run }))),
      );
      await killAfter(doomed, "start", ids, 2);
      await survivors;
      await b.ask({ op: "recover" });
      expect(await c.ask({ op: "wait", runs: ids, status: "awaiting_input" })).toMatchObject({
        ok: true,
      });
      await Promise.all(
        alive.flatMap((replica) => ids.map((run) => replica.ask({ op: "approve", run }))),
      );
      expect(await b.ask({ op: "wait", runs: ids, status: "succeeded" })).toMatchObject({
        ok: true,
      });
      // Whichever replica finished a run writes its evidence just after: wait for both.
      await Promise.all(alive.map((replica) => replica.ask({ op: "idle" })));
      expect(await onceEach(store, ids)).toEqual([]);
      expect(await checkInvariants({ store, runIds: ids })).toEqual([]);
      await Promise.all(alive.map((replica) => replica.stop()));
    },
  );
});
