import { describe, expect, it } from "vitest";
import type { DynamoStore } from "../../src/store/dynamo-store.js";
import { Replica, useReplicaTables } from "./replica-process.js";

const dynamo = useReplicaTables("replicas");
const newTable = () => dynamo.newTable();

async function expectOnce(store: DynamoStore, runIds: string[]) {
  for (const runId of runIds) {
    const run = await store.getRun(runId);
    expect(run?.status, runId).toBe("succeeded");
    const evidence = await store.listEvidence(runId);
    expect(
      evidence.map((record) => record.seq),
      runId,
    ).toEqual(evidence.map((_, index) => index + 1));
    const kinds = evidence.map((record) => (record.entry as { kind: string }).kind);
    for (const kind of ["run.started", "approval.answered", "run.finished"]) {
      expect(
        kinds.filter((seen) => seen === kind),
        `${runId}: ${kind}`,
      ).toHaveLength(1);
    }
  }
}

describe("two app replicas over one DynamoDB endpoint", () => {
  it("every run advances exactly once per event, whichever replica gets it", async () => {
    const { table, store } = await newTable();
    const a = new Replica(dynamo.endpoint, table, "a");
    const b = new Replica(dynamo.endpoint, table, "b");
    const runs = Array.from({ length: 8 }, (_, index) => `dup${index}`);
    // Both replicas get every start and every approval, as with a duplicated delivery.
    const starts = await Promise.all(
      runs.flatMap((run) => [a.ask({ op: "start", run }), b.ask({ op: "start", run })]),
    );
    expect(starts.filter((answer) => answer.started === true)).toHaveLength(runs.length);
    expect(await a.ask({ op: "wait", runs, status: "awaiting_input" })).toMatchObject({ ok: true });
    const approvals = await Promise.all(
      runs.flatMap((run) => [a.ask({ op: "approve", run }), b.ask({ op: "approve", run })]),
    );
    expect(approvals.filter((answer) => answer.applied === true)).toHaveLength(runs.length);
    expect(await b.ask({ op: "wait", runs, status: "succeeded" })).toMatchObject({ ok: true });
    // Whichever replica finished a run writes its evidence just after: wait for both.
    await Promise.all([a.ask({ op: "idle" }), b.ask({ op: "idle" })]);
    await expectOnce(store, runs);
    await Promise.all([a.stop(), b.stop()]);
  }, 120_000);

  it("loses no run when one replica is killed mid-work", async () => {
    const { table, store } = await newTable();
    const a = new Replica(dynamo.endpoint, table, "a");
    const b = new Replica(dynamo.endpoint, table, "b");
    const runs = Array.from({ length: 8 }, (_, index) => `kill${index}`);
    const first = a.ask({ op: "start", run: runs[0] });
    for (const run of runs.slice(1)) void a.ask({ op: "start", run });
    await first;
    a.process.kill("SIGKILL");
    await new Promise((resolve) => a.process.once("close", resolve));
    // The survivor takes over what the dead replica held, and starts what it never created.
    await b.ask({ op: "recover" });
    await Promise.all(runs.map((run) => b.ask({ op: "start", run })));
    expect(await b.ask({ op: "wait", runs, status: "awaiting_input" })).toMatchObject({ ok: true });
    await Promise.all(runs.map((run) => b.ask({ op: "approve", run })));
    expect(await b.ask({ op: "wait", runs, status: "succeeded" })).toMatchObject({ ok: true });
    await b.ask({ op: "idle" });
    await expectOnce(store, runs);
    await b.stop();
  }, 120_000);

  it("declares a DevBox lost only once the replica that runs it is gone", async () => {
    const { table, store } = await newTable();
    const a = new Replica(dynamo.endpoint, table, "a");
    const b = new Replica(dynamo.endpoint, table, "b");
    // Replica a runs the build's DevBox; its command is still running.
    await a.ask({ op: "start", run: "held", hold: true });
    // b recovers (as a replica that just restarted does): a is alive, so nothing is lost.
    expect(await b.ask({ op: "recover-once", run: "held" })).toMatchObject({
      ownedElsewhere: true,
    });
    expect((await store.getRun("held"))?.status).toBe("running");
    const kinds = async () => (await b.ask({ op: "evidence", run: "held" })).kinds as string[];
    expect(await kinds()).not.toContain("attempt.lost");
    // a dies with its DevBox; once its lease lapses, b declares the DevBox lost.
    await a.kill();
    expect(await b.ask({ op: "recover" })).toMatchObject({ ownedElsewhere: [] });
    // Evidence is written just after the transition: read until it is there (bounded).
    for (let i = 0; i < 100 && !(await kinds()).includes("attempt.lost"); i++)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await kinds()).toContain("attempt.lost");
    await b.stop();
  }, 120_000);
});
