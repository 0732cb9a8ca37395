import { describe, expect, it } from "vitest";
import type { EvidenceRecord, Receipt } from "../../src/store/store.js";
import { useTestDynamo } from "./dynalite-fixture.js";

const dynamo = useTestDynamo();

function evidence(runId: string, seq: number, entry: unknown = { step: seq }): EvidenceRecord {
  return { runId, seq, at: 10_000 + seq, entry };
}

function receipt(runId: string, seq: number, result: unknown = { ok: seq }): Receipt {
  return { runId, seq, at: 20_000 + seq, result };
}

describe("evidence and receipts", () => {
  it("lists a run's evidence in seq order, past 9 and across batches of 25", async () => {
    const store = await dynamo.newStore();
    const entries = Array.from({ length: 60 }, (_, i) => evidence("r1", 59 - i));
    await store.writeAfterEffects(entries, []);
    await store.writeAfterEffects([evidence("r2", 0)], []);
    const listed = await store.listEvidence("r1");
    expect(listed.map((e) => e.seq)).toEqual(Array.from({ length: 60 }, (_, i) => i));
    expect(listed[12]).toEqual(evidence("r1", 12));
    expect(await store.listEvidence("none")).toEqual([]);
  });

  it("keeps one entry when the same evidence and receipts are written again", async () => {
    const store = await dynamo.newStore();
    const batch = [evidence("r1", 1), evidence("r1", 2)];
    await store.writeAfterEffects(batch, [receipt("r1", 1)]);
    // A runtime retrying after a crash writes the same keys again, even twice in one call.
    await store.writeAfterEffects(
      [...batch, evidence("r1", 2)],
      [receipt("r1", 1), receipt("r1", 1)],
    );
    expect(await store.listEvidence("r1")).toEqual(batch);
    expect([...(await store.getReceipts("r1", [1])).values()]).toEqual([receipt("r1", 1)]);
  });

  it("finds the receipts of the effects that were performed, and only those", async () => {
    const store = await dynamo.newStore();
    // An effect that returned nothing still leaves a receipt.
    const empty: Receipt = { runId: "r1", seq: 3, at: 20_003, result: undefined };
    await store.writeAfterEffects([], [receipt("r1", 1), empty]);
    await store.writeAfterEffects([], [receipt("r2", 2)]);
    const found = await store.getReceipts("r1", [1, 2, 3, 3]);
    expect([...found.keys()].sort()).toEqual([1, 3]);
    expect(found.get(1)).toEqual(receipt("r1", 1));
    expect(found.get(3)).toStrictEqual({ runId: "r1", seq: 3, at: 20_003, result: undefined });
    expect((await store.getReceipts("r1", [])).size).toBe(0);
  });

  it("looks up more receipts than one BatchGetItem carries", async () => {
    const store = await dynamo.newStore();
    const receipts = Array.from({ length: 130 }, (_, i) => receipt("r1", i));
    await store.writeAfterEffects([], receipts);
    const found = await store.getReceipts(
      "r1",
      receipts.map((r) => r.seq),
    );
    expect(found.size).toBe(130);
    expect(found.get(129)).toEqual(receipt("r1", 129));
  });

  it("writes after-effects in one BatchWriteItem per 25 items", async () => {
    const requests: string[] = [];
    const store = await dynamo.newStore({ onRequest: (name) => requests.push(name) });
    await store.writeAfterEffects([evidence("r1", 1), evidence("r1", 2)], [receipt("r1", 1)]);
    expect(requests).toEqual(["BatchWriteItem"]);
    requests.length = 0;
    const many = Array.from({ length: 30 }, (_, i) => evidence("r1", i));
    await store.writeAfterEffects(many, []);
    expect(requests).toEqual(["BatchWriteItem", "BatchWriteItem"]);
    requests.length = 0;
    await store.writeAfterEffects([], []);
    expect(requests).toEqual([]);
  });

  it("writes every item even when DynamoDB returns some of them unprocessed", async () => {
    const requests: string[] = [];
    const store = await dynamo.newStore({
      onRequest: (name) => requests.push(name),
      batchRetryDelayMs: 1,
    });
    // Throttle the real server's answers: each BatchWriteItem carries only its first item and
    // hands the rest back as unprocessed, as DynamoDB does under load.
    const table = store.table;
    dynamo.client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName !== "BatchWriteItemCommand") return next(args);
        const input = args.input as { RequestItems: Record<string, unknown[]> };
        const [first, ...rest] = input.RequestItems[table] ?? [];
        input.RequestItems[table] = [first];
        const result = await next(args);
        const output = result.output as { UnprocessedItems?: Record<string, unknown[]> };
        if (rest.length > 0) output.UnprocessedItems = { [table]: rest };
        return result;
      },
      { step: "initialize", name: "throttleBatches" },
    );
    try {
      await store.writeAfterEffects([evidence("r1", 1), evidence("r1", 2)], [receipt("r1", 1)]);
    } finally {
      dynamo.client.middlewareStack.remove("throttleBatches");
    }
    expect(requests).toEqual(["BatchWriteItem", "BatchWriteItem", "BatchWriteItem"]);
    expect((await store.listEvidence("r1")).map((e) => e.seq)).toEqual([1, 2]);
    expect((await store.getReceipts("r1", [1])).has(1)).toBe(true);
  });

  it("rejects a negative seq before writing anything", async () => {
    const store = await dynamo.newStore();
    await expect(
      store.writeAfterEffects([evidence("r1", 1), evidence("r1", -1)], []),
    ).rejects.toMatchObject({
      name: "StoreError",
      code: "invalid_argument",
      message: "The seq must be a non-negative integer: -1",
    });
    expect(await store.listEvidence("r1")).toEqual([]);
  });
});
