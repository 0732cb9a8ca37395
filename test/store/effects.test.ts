import { readFileSync } from "node:fs";
import { BatchWriteItemCommand, QueryCommand, ScanCommand } from "@aws-sdk/client-dynamodb";
import { describe, expect, it } from "vitest";
import type { Item } from "../../src/store/dynamo-attributes.js";
import { DYNAMODB_LIMITS, itemSize } from "../../src/store/dynamo-limits.js";
import type { DynamoStore } from "../../src/store/dynamo-store.js";
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
    // Entries that do not follow each other are an item each.
    const many = Array.from({ length: 30 }, (_, i) => evidence("r1", 2 * i));
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
    // Two items: the run's two consecutive entries share one.
    expect(requests).toEqual(["BatchWriteItem", "BatchWriteItem"]);
    expect((await store.listEvidence("r1")).map((e) => e.seq)).toEqual([1, 2]);
    expect((await store.getReceipts("r1", [1])).has(1)).toBe(true);
  });

  it("keeps a run's consecutive entries written together in one item", async () => {
    const store = await dynamo.newStore();
    const written = [1, 2, 3, 4, 5, 7].map((seq) => evidence("r1", seq));
    await store.writeAfterEffects([...written, evidence("r2", 3)], []);
    expect(await evidenceKeys(store)).toEqual([
      "RUN#r1 EV#0000000007",
      "RUN#r1 EVP#0000000001#0000000005",
      "RUN#r2 EV#0000000003",
    ]);
    expect(await store.listEvidence("r1")).toEqual(written);
    expect(await store.listEvidence("r2")).toEqual([evidence("r2", 3)]);
    // A replica of the build before packs, beside this one in a rolling deploy, lists `EV#`
    // items: it sees the lone entry and never meets a pack it could not read.
    const { Items = [] } = await dynamo.client.send(
      new QueryCommand({
        TableName: store.table,
        KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
        ExpressionAttributeValues: { ":pk": { S: "RUN#r1" }, ":prefix": { S: "EV#" } },
      }),
    );
    expect(Items.map((item) => [item.kind?.S, item.seq?.N])).toEqual([["evidence", "7"]]);
  });

  it("lists an entry once when a recovering run writes it again in another item", async () => {
    const store = await dynamo.newStore();
    await store.writeAfterEffects(
      [1, 2, 3].map((seq) => evidence("r1", seq)),
      [],
    );
    await store.writeAfterEffects([evidence("r1", 4)], []);
    // Recovery rewrites the outbox's evidence, which overlaps what was written already.
    await store.writeAfterEffects(
      [2, 3, 4, 5].map((seq) => evidence("r1", seq)),
      [],
    );
    expect(await store.listEvidence("r1")).toEqual(
      [1, 2, 3, 4, 5].map((seq) => evidence("r1", seq)),
    );
  });

  it("reads evidence written one item per entry, as the store did before packs", async () => {
    const store = await dynamo.newStore();
    const fixture = new URL("./fixtures/evidence-items-2026-12.json", import.meta.url);
    const old = JSON.parse(readFileSync(fixture, "utf8")) as Item[];
    await dynamo.client.send(
      new BatchWriteItemCommand({
        RequestItems: { [store.table]: old.map((Item) => ({ PutRequest: { Item } })) },
      }),
    );
    const before = await store.listEvidence("old1");
    expect(before.map((record) => record.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(before[4]).toEqual({
      runId: "old1",
      seq: 5,
      at: 1_764_800_001_000,
      entry: {
        at: 1_764_800_001_000,
        kind: "command.dispatched",
        node: "fix",
        attempt: 1,
        devbox: "d4",
        command: "c7",
        run: "npm test",
      },
    });
    // The run goes on under the new layout, rewriting its last two entries on recovery.
    const next = [evidence("old1", 6), evidence("old1", 7)];
    await store.writeAfterEffects([...before.slice(3), ...next], []);
    expect(await store.listEvidence("old1")).toEqual([...before, ...next]);
  });

  it("splits a run's large entries over several items, each within DynamoDB's item size", async () => {
    const store = await dynamo.newStore();
    // 3 bytes of UTF-8 per character: 40 entries of 30 KB, 1.2 MB in all.
    const written = Array.from({ length: 40 }, (_, seq) =>
      evidence("r1", seq, { tail: "失敗".repeat(5_000) + String(seq) }),
    );
    await store.writeAfterEffects(written, []);
    const { Items = [] } = await dynamo.client.send(new ScanCommand({ TableName: store.table }));
    expect(Items.length).toBeGreaterThan(3);
    for (const item of Items) expect(itemSize(item)).toBeLessThan(DYNAMODB_LIMITS.itemBytes);
    expect(await store.listEvidence("r1")).toEqual(written);
  });

  it("reads back a packed entry that is undefined as undefined", async () => {
    const store = await dynamo.newStore();
    await store.writeAfterEffects(
      [{ ...evidence("r1", 1), entry: undefined }, evidence("r1", 2)],
      [],
    );
    const listed = await store.listEvidence("r1");
    expect(listed[0]).toStrictEqual({ runId: "r1", seq: 1, at: 10_001, entry: undefined });
    expect(listed[1]).toEqual(evidence("r1", 2));
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

  it("rejects a time JSON cannot hold before writing anything", async () => {
    const store = await dynamo.newStore();
    const bad = { ...evidence("r1", 2), at: Number.NaN };
    await expect(store.writeAfterEffects([evidence("r1", 1), bad], [])).rejects.toMatchObject({
      name: "StoreError",
      code: "invalid_argument",
      message: "Cannot store the number NaN",
    });
    expect(await store.listEvidence("r1")).toEqual([]);
  });
});

/** The keys of the table's evidence items, as `pk sk`, sorted. */
async function evidenceKeys(store: DynamoStore): Promise<string[]> {
  const { Items = [] } = await dynamo.client.send(new ScanCommand({ TableName: store.table }));
  return Items.map((item) => `${item.pk?.S} ${item.sk?.S}`).sort();
}
