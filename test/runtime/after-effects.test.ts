import { describe, expect, it } from "vitest";
import type { Effect } from "../../src/engine/model.js";
import { AfterEffects } from "../../src/runtime/after-effects.js";
import type { Receipt } from "../../src/store/store.js";
import { useTestDynamo } from "../store/dynalite-fixture.js";

const dynamo = useTestDynamo();

type EvidenceEffect = Extract<Effect, { type: "evidence" }>;

function evidence(evidenceSeq: number): EvidenceEffect {
  return {
    type: "evidence",
    seq: 100 + evidenceSeq,
    evidenceSeq,
    entry: { at: evidenceSeq, kind: "checkpoint", node: "a", branch: "b" },
  };
}

function receipt(runId: string, seq: number): Receipt {
  return { runId, seq, at: seq, result: null };
}

describe("evidence and receipts written after a transition", () => {
  it("leaves out the receipts of an outbox the run has moved past, and keeps its evidence", async () => {
    const writes: string[] = [];
    const store = await dynamo.newStore({ onRequest: (name) => writes.push(name) });
    const after = new AfterEffects(store);
    // Version 2's effects are performed; the run is saved at version 3 before the group goes out.
    const second = after.record("r1", 2, [evidence(1), evidence(2)], [receipt("r1", 5)]);
    after.saved("r1", 3);
    const third = after.record("r1", 3, [evidence(3)], [receipt("r1", 7)]);
    // Another run's receipts are not its business.
    const other = after.record("r2", 4, [], [receipt("r2", 5)]);
    await Promise.all([second, third, other]);
    await after.idle();
    // One request: the receipts owed and the three entries, in one item.
    expect(writes).toEqual(["BatchWriteItem"]);
    expect([...(await store.getReceipts("r1", [5, 7])).keys()]).toEqual([7]);
    expect([...(await store.getReceipts("r2", [5])).keys()]).toEqual([5]);
    expect((await store.listEvidence("r1")).map((record) => record.seq)).toEqual([1, 2, 3]);
  });

  it("writes the receipts of the run's latest outbox", async () => {
    const store = await dynamo.newStore();
    const after = new AfterEffects(store);
    after.saved("r1", 2);
    await after.record("r1", 2, [], [receipt("r1", 5)]);
    expect([...(await store.getReceipts("r1", [5])).keys()]).toEqual([5]);
  });

  it("writes an outbox's receipts when the run is saved again only after they are written", async () => {
    const store = await dynamo.newStore();
    const after = new AfterEffects(store);
    await after.record("r1", 2, [evidence(1)], [receipt("r1", 5)]);
    after.saved("r1", 3);
    await after.record("r1", 3, [evidence(2)], [receipt("r1", 7)]);
    expect([...(await store.getReceipts("r1", [5, 7])).keys()].sort()).toEqual([5, 7]);
    expect((await store.listEvidence("r1")).map((record) => record.seq)).toEqual([1, 2]);
  });
});
