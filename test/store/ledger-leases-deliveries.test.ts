import { GetItemCommand } from "@aws-sdk/client-dynamodb";
import { describe, expect, it } from "vitest";
import type { DeliveryRecord } from "../../src/store/store.js";
import { useTestDynamo } from "./dynalite-fixture.js";

const dynamo = useTestDynamo();

function delivery(deliveryId: string, receivedAt: number): DeliveryRecord {
  return { deliveryId, event: "issue_comment", payload: { action: "created" }, receivedAt };
}

describe("deliveries", () => {
  it("records a delivery once and reports a redelivery as a duplicate", async () => {
    const store = await dynamo.newStore();
    expect(await store.recordDelivery(delivery("d1", 1_000))).toBe(true);
    expect(await store.recordDelivery({ ...delivery("d1", 2_000), event: "push" })).toBe(false);
    expect(await store.unprocessedDeliveries()).toEqual([delivery("d1", 1_000)]);
  });

  it("lists unprocessed deliveries oldest first until they are processed", async () => {
    const requests: string[] = [];
    const store = await dynamo.newStore({ onRequest: (name) => requests.push(name) });
    await store.recordDelivery(delivery("late", 3_000));
    await store.recordDelivery(delivery("early", 1_000));
    await store.recordDelivery(delivery("middle", 2_000));
    await store.recordDelivery({ ...delivery("done-on-arrival", 500), processedAt: 600 });
    expect((await store.unprocessedDeliveries()).map((d) => d.deliveryId)).toEqual([
      "early",
      "middle",
      "late",
    ]);
    requests.length = 0;
    await store.markDeliveriesProcessed([delivery("middle", 2_000)], 5_000);
    expect(requests).toEqual(["BatchWriteItem"]);
    expect((await store.unprocessedDeliveries(5)).map((d) => d.deliveryId)).toEqual([
      "early",
      "late",
    ]);
    expect(await store.unprocessedDeliveries(1)).toEqual([delivery("early", 1_000)]);
    // Still a duplicate once processed: a redelivery must not be processed twice.
    expect(await store.recordDelivery(delivery("middle", 7_000))).toBe(false);
  });

  it("keeps a processed delivery's id and times, not its payload", async () => {
    const store = await dynamo.newStore();
    const body = "x".repeat(20_000);
    const comment = { ...delivery("d1", 1_000), payload: { comment: { body } } };
    await store.recordDelivery(comment);
    const stored = () =>
      dynamo.client.send(
        new GetItemCommand({
          TableName: store.table,
          Key: { pk: { S: "DELIVERY#d1" }, sk: { S: "DELIVERY" } },
        }),
      );
    expect((await stored()).Item?.payloadZ).toBeDefined();
    await store.markDeliveriesProcessed([comment], 2_000);
    const processed = (await stored()).Item ?? {};
    expect(processed.payloadZ).toBeUndefined();
    expect(processed.processedAt).toEqual({ N: "2000" });
    expect(await store.recordDelivery(delivery("d1", 3_000))).toBe(false);
  });
});

describe("deliveries recorded in groups", () => {
  it("reads the group's ids, then writes only the new ones, one flag each", async () => {
    const requests: string[] = [];
    const store = await dynamo.newStore({ onRequest: (name) => requests.push(name) });
    await store.recordDelivery(delivery("old", 500));
    await store.markDeliveriesProcessed([delivery("old", 500)], 600);
    requests.length = 0;
    const group = ["a", "old", "b", "a"].map((id, i) => delivery(id, 1_000 + i));
    expect(await store.recordDeliveries(group)).toEqual([true, false, true, false]);
    expect(requests).toEqual(["BatchGetItem", "BatchWriteItem"]);
    // The processed one stays processed; the repeat within the group kept the first copy.
    expect(await store.unprocessedDeliveries()).toEqual([
      delivery("a", 1_000),
      delivery("b", 1_002),
    ]);
    requests.length = 0;
    // A group of one is a conditional put.
    expect(await store.recordDeliveries([delivery("a", 2_000)])).toEqual([false]);
    expect(await store.recordDeliveries([delivery("c", 2_000)])).toEqual([true]);
    expect(requests).toEqual(["PutItem", "PutItem"]);
  });

  it("lets one holder claim a delivery, and another take it over only as allowed", async () => {
    const store = await dynamo.newStore();
    await store.recordDeliveries([delivery("d1", 1_000)]);
    expect(await store.claimDelivery("d1", "a", 1_000)).toBe(true);
    expect(await store.claimDelivery("d1", "b", 1_001)).toBe(false);
    expect(await store.claimDelivery("d1", "a", 1_002)).toBe(true);
    expect(await store.claimDelivery("d1", "b", 1_003, { from: "c", before: 1_000 })).toBe(false);
    expect(await store.claimDelivery("d1", "b", 1_004, { from: "a" })).toBe(true);
    expect(await store.claimDelivery("d1", "c", 1_005, { before: 1_004 })).toBe(false);
    expect(await store.claimDelivery("d1", "c", 1_006, { before: 1_005 })).toBe(true);
    // Rewriting the delivery (as a copy that raced past the read does) leaves its claim.
    await store.markDeliveriesProcessed([delivery("d1", 1_000)], 2_000);
    expect(await store.claimDelivery("d1", "a", 2_001)).toBe(false);
    expect(await store.claimDelivery("d1", "c", 2_002)).toBe(true);
  });

  it("tells who holds each delivery's claim, and none for one never claimed or forgotten", async () => {
    const store = await dynamo.newStore();
    await store.recordDeliveries([delivery("d1", 1_000), delivery("d2", 1_000)]);
    expect(await store.deliveryClaimers([], 1_000)).toEqual(new Map());
    expect(await store.claimDelivery("d1", "a", 1_000)).toBe(true);
    expect(await store.claimDelivery("d1", "b", 1_001, { from: "a" })).toBe(true);
    expect(await store.deliveryClaimers(["d1", "d2", "d1"], 1_002)).toEqual(new Map([["d1", "b"]]));
    // A claim is remembered 7 days from when it was made, then read as absent.
    expect(await store.deliveryClaimers(["d1"], 8 * 24 * 3_600_000)).toEqual(new Map());
  });
});

describe("cost ledger", () => {
  it("adds concurrent costs without losing any, each caller seeing its own total", async () => {
    const store = await dynamo.newStore();
    const scope = "octo/app#fix#loop";
    const totals = await Promise.all(
      Array.from({ length: 20 }, () => store.addCost(scope, "2025-06-01", 0.1)),
    );
    expect(await store.getCost(scope, "2025-06-01")).toBe(2);
    // Decimal arithmetic in the database: 0.1 twenty times is 2, and every step is exact.
    expect([...totals].sort((a, b) => a - b)).toEqual(
      Array.from({ length: 20 }, (_, i) => Number(((i + 1) / 10).toFixed(1))),
    );
  });

  it("keeps days and scopes apart, and reads an untouched ledger as zero", async () => {
    const store = await dynamo.newStore();
    expect(await store.addCost("a", "2025-06-01", 1.25)).toBe(1.25);
    expect(await store.addCost("a", "2025-06-02", 0.5)).toBe(0.5);
    expect(await store.addCost("b", "2025-06-01", 3)).toBe(3);
    expect(await store.getCost("a", "2025-06-01")).toBe(1.25);
    expect(await store.getCost("a", "2025-06-03")).toBe(0);
  });

  it("counts a keyed add once however often it is sent, and unkeyed adds every time", async () => {
    const store = await dynamo.newStore();
    const sent = await Promise.all([
      store.addCost("a", "2025-06-01", 1.5, "run1/4"),
      store.addCost("a", "2025-06-01", 1.5, "run1/4"),
    ]);
    expect(await store.addCost("a", "2025-06-01", 1.5, "run1/4")).toBe(1.5);
    expect(sent).toEqual([1.5, 1.5]);
    expect(await store.addCost("a", "2025-06-01", 2, "run1/9")).toBe(3.5);
    expect(await store.addCost("a", "2025-06-01", 0)).toBe(3.5);
    expect(await store.addCost("a", "2025-06-01", 1)).toBe(4.5);
    expect(await store.addCost("a", "2025-06-01", 1)).toBe(5.5);
  });

  it("rejects a day that is not YYYY-MM-DD and a cost that is not a number", async () => {
    const store = await dynamo.newStore();
    await expect(store.addCost("a", "1 June", 1)).rejects.toMatchObject({
      code: "invalid_argument",
      message: "Not a YYYY-MM-DD day: 1 June",
    });
    await expect(store.addCost("a", "2025-06-01", Number.NaN)).rejects.toMatchObject({
      code: "invalid_argument",
      message: "Cannot store the number NaN",
    });
    expect(await store.getCost("a", "2025-06-01")).toBe(0);
  });
});

describe("leases", () => {
  it("gives a free lease to one holder and keeps others out until it expires", async () => {
    const store = await dynamo.newStore();
    expect(await store.acquireLease("scheduler", "host-a", 1_000, 10_000)).toBe(true);
    expect(await store.acquireLease("scheduler", "host-b", 5_000, 10_000)).toBe(false);
    // The holder renews its own lease.
    expect(await store.acquireLease("scheduler", "host-a", 9_000, 10_000)).toBe(true);
    expect(await store.acquireLease("scheduler", "host-b", 15_000, 10_000)).toBe(false);
    expect(await store.acquireLease("scheduler", "host-b", 19_000, 10_000)).toBe(true);
    expect(await store.acquireLease("scheduler", "host-a", 20_000, 10_000)).toBe(false);
  });

  it("lets exactly one of several concurrent hosts take a free lease", async () => {
    const store = await dynamo.newStore();
    const hosts = Array.from({ length: 6 }, (_, i) => `host-${i}`);
    const won = await Promise.all(hosts.map((h) => store.acquireLease("l", h, 1_000, 5_000)));
    expect(won.filter(Boolean)).toHaveLength(1);
  });

  it("releases only the holder's own lease", async () => {
    const store = await dynamo.newStore();
    await store.acquireLease("l", "host-a", 1_000, 10_000);
    await store.releaseLease("l", "host-b");
    expect(await store.acquireLease("l", "host-b", 2_000, 10_000)).toBe(false);
    await store.releaseLease("l", "host-a");
    expect(await store.acquireLease("l", "host-b", 2_000, 10_000)).toBe(true);
  });
});
