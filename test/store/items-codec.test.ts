import { deflateRawSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import * as items from "../../src/store/dynamo-items.js";
import type { DeliveryRecord, StoredRun } from "../../src/store/store.js";

// Items exactly as the store has always written them: the codec must keep writing these shapes
// and reading them back the same, or tables written before would read differently.
const RUN: StoredRun = {
  runId: "r1",
  version: 3,
  repo: "acme/widgets",
  workflow: "",
  status: "running",
  snapshot: { state: { nested: { list: [1, "", null] } } },
  outbox: [],
  createdAt: 0,
  updatedAt: 1_700_000_000_123,
  issue: 7,
};

const RUN_ITEM = {
  pk: { S: "RUN#r1" },
  sk: { S: "RUN" },
  kind: { S: "run" },
  runId: { S: "r1" },
  version: { N: "3" },
  repo: { S: "acme/widgets" },
  workflow: { S: "" },
  status: { S: "running" },
  snapshot: { S: '{"state":{"nested":{"list":[1,"",null]}}}' },
  outbox: { S: "[]" },
  createdAt: { N: "0" },
  updatedAt: { N: "1700000000123" },
  gsi1pk: { S: "REPO#acme/widgets" },
  gsi1sk: { S: "000000000000000#r1" },
  issue: { N: "7" },
  gsi2pk: { S: "RUNS#ACTIVE" },
  gsi2sk: { S: "acme/widgets#000000000000000#r1" },
};

describe("the DynamoDB item codec", () => {
  it("writes a run in the attribute shapes it always had, and reads them back", () => {
    expect(items.encodeRun(RUN)).toEqual(RUN_ITEM);
    expect(items.decodeRun(RUN_ITEM)).toEqual(RUN);
  });

  it("leaves out what is undefined: no snapshot, no issue, no active index once final", () => {
    const ended = { ...RUN, status: "succeeded", snapshot: undefined };
    delete ended.issue;
    const item = items.encodeRun(ended);
    expect(Object.keys(item).sort()).toEqual(
      Object.keys(RUN_ITEM)
        .filter((name) => !["snapshot", "issue", "gsi2pk", "gsi2sk"].includes(name))
        .sort(),
    );
    expect(items.decodeRun(item)).toEqual({ ...ended, snapshot: undefined });
  });

  it("keeps a delivery's payload as compressed binary, and reads one written before", () => {
    const payload = { action: "created", comment: { body: "/approve", id: 12.5 } };
    const delivery: DeliveryRecord = {
      deliveryId: "d1",
      event: "issue_comment",
      payload,
      receivedAt: 42,
      receivedBy: "",
    };
    const before = {
      pk: { S: "DELIVERY#d1" },
      sk: { S: "DELIVERY" },
      kind: { S: "delivery" },
      deliveryId: { S: "d1" },
      event: { S: "issue_comment" },
      payloadZ: { B: deflateRawSync(JSON.stringify(payload), { level: 1 }) },
      receivedAt: { N: "42" },
      receivedBy: { S: "" },
      gsi2pk: { S: "DELIVERIES#UNPROCESSED" },
      gsi2sk: { S: "000000000000042#d1" },
    };
    const item = items.encodeDelivery(delivery);
    expect(Object.keys(item).sort()).toEqual(Object.keys(before).sort());
    expect(Buffer.from(item.payloadZ?.B ?? [])).toEqual(before.payloadZ.B);
    expect({ ...item, payloadZ: undefined }).toEqual({ ...before, payloadZ: undefined });
    // The SDK reads binary back as a Uint8Array.
    const read = { ...before, payloadZ: { B: new Uint8Array(before.payloadZ.B) } };
    expect(items.decodeDelivery(read)).toEqual(delivery);
    expect(items.decodeDelivery({ ...read, processedAt: { N: "43.5" } })).toEqual({
      ...delivery,
      processedAt: 43.5,
    });
  });

  it("writes numbers as decimal strings and refuses what DynamoDB cannot hold", () => {
    expect(items.num(0.1)).toEqual({ N: "0.1" });
    expect(items.num(-3)).toEqual({ N: "-3" });
    expect(() => items.num(Number.NaN)).toThrow("Cannot store the number NaN");
    expect(() => items.encodeReceipt({ runId: "r", seq: 1, at: Infinity, result: null })).toThrow(
      "Cannot store the number Infinity",
    );
  });

  it("names the item and attribute a stored item lacks", () => {
    const broken: Partial<typeof RUN_ITEM> = { ...RUN_ITEM };
    delete broken.runId;
    expect(() => items.decodeRun(broken)).toThrow(
      'Stored item RUN#r1/RUN has no string attribute "runId"',
    );
  });
});
