/**
 * Items needed for a bounded time carry a TTL attribute, and an item past it reads as gone
 * whether or not DynamoDB has deleted it yet (dynalite never deletes: these tests see exactly
 * the expired-but-present items AWS shows until its TTL sweep comes round).
 */
import { DeleteItemCommand, GetItemCommand } from "@aws-sdk/client-dynamodb";
import { describe, expect, it } from "vitest";
import type { DynamoStore } from "../../src/store/dynamo-store.js";
import {
  DELIVERY_MEMORY_MS,
  EXPIRY_ATTRIBUTE,
  keyOf,
  LEASE_AFTERLIFE_MS,
  type Item,
} from "../../src/store/dynamo-items.js";
import type { DeliveryRecord } from "../../src/store/store.js";
import { useTestDynamo } from "./dynalite-fixture.js";

const dynamo = useTestDynamo();
const DAY = 86_400_000;
const T0 = 1_750_000_000_000;

function delivery(deliveryId: string, receivedAt: number): DeliveryRecord {
  return { deliveryId, event: "issue_comment", payload: { action: "created" }, receivedAt };
}

async function rawItem(store: DynamoStore, key: Item): Promise<Item | undefined> {
  return (await dynamo.client.send(new GetItemCommand({ TableName: store.table, Key: key }))).Item;
}

async function expiryOf(store: DynamoStore, key: Item): Promise<string | undefined> {
  return (await rawItem(store, key))?.[EXPIRY_ATTRIBUTE]?.N;
}

describe("item expiry", () => {
  it("remembers deliveries for 7 days: GitHub redelivers for 3", () => {
    expect(DELIVERY_MEMORY_MS).toBe(7 * DAY);
    expect(EXPIRY_ATTRIBUTE).toBe("ttl");
  });

  it("writes the TTL on processed deliveries and claims, in epoch seconds, never on unprocessed ones", async () => {
    const store = await dynamo.newStore();
    await store.recordDelivery(delivery("d1", T0));
    expect(await rawItem(store, keyOf.delivery("d1"))).toBeDefined();
    expect(await expiryOf(store, keyOf.delivery("d1"))).toBeUndefined();
    expect(await store.claimDelivery("d1", "a", T0 + 10)).toBe(true);
    expect(await expiryOf(store, keyOf.deliveryClaim("d1"))).toBe(
      String(Math.ceil((T0 + 10 + 7 * DAY) / 1000)),
    );
    await store.markDeliveriesProcessed([delivery("d1", T0)], T0 + 1_500);
    expect(await expiryOf(store, keyOf.delivery("d1"))).toBe(
      String(Math.ceil((T0 + 1_500 + 7 * DAY) / 1000)),
    );
  });

  it("refuses a redelivery within 7 days of processing, and records one after as new though the old record is still there", async () => {
    const store = await dynamo.newStore();
    await store.recordDelivery(delivery("d1", T0));
    expect(await store.claimDelivery("d1", "replica-a", T0)).toBe(true);
    await store.markDeliveriesProcessed([delivery("d1", T0)], T0 + 1_000);
    const expired = T0 + 1_000 + 7 * DAY;
    expect(await store.recordDelivery(delivery("d1", expired - 1_000))).toBe(false);
    expect(await store.recordDeliveries([delivery("d1", expired - 1), delivery("x", T0)])).toEqual([
      false,
      true,
    ]);
    // Past its memory, with the expired record (and claim) still in the table.
    expect(await rawItem(store, keyOf.delivery("d1"))).toBeDefined();
    expect(await store.recordDelivery(delivery("d1", expired))).toBe(true);
    expect((await store.unprocessedDeliveries()).map((d) => d.deliveryId)).toEqual(["x", "d1"]);
    // The new record can be handled: the old claim expired with it.
    expect(await store.claimDelivery("d1", "replica-b", expired + 5)).toBe(true);
    expect(await store.claimDelivery("d1", "replica-a", expired + 6)).toBe(false);
    // A repeat of the new record is a duplicate again.
    expect(await store.recordDelivery(delivery("d1", expired + 7))).toBe(false);
  });

  it("records an expired delivery afresh in a group as well, once per group", async () => {
    const store = await dynamo.newStore();
    await store.recordDelivery(delivery("d1", T0));
    await store.markDeliveriesProcessed([delivery("d1", T0)], T0);
    const later = T0 + 8 * DAY;
    expect(
      await store.recordDeliveries([delivery("d1", later), delivery("d1", later + 1)]),
    ).toEqual([true, false]);
    expect(await store.unprocessedDeliveries()).toEqual([delivery("d1", later)]);
  });

  it("never forgets an unprocessed delivery: it is work still owed", async () => {
    const store = await dynamo.newStore();
    await store.recordDelivery(delivery("d1", T0));
    expect(await store.recordDelivery(delivery("d1", T0 + 30 * DAY))).toBe(false);
    expect(
      await store.recordDeliveries([delivery("d1", T0 + 30 * DAY), delivery("x", T0)]),
    ).toEqual([false, true]);
  });

  it("gives a lease a TTL a day after it ends, and a lease TTL deleted is as free as one expired", async () => {
    const store = await dynamo.newStore();
    expect(await store.acquireLease("schedule:a#1", "host-a", T0, 60_000)).toBe(true);
    expect(await expiryOf(store, keyOf.lease("schedule:a#1"))).toBe(
      String(Math.ceil((T0 + 60_000 + LEASE_AFTERLIFE_MS) / 1000)),
    );
    // The lease's own end stays in milliseconds, apart from the TTL.
    expect((await rawItem(store, keyOf.lease("schedule:a#1")))?.expiresAt?.N).toBe(
      String(T0 + 60_000),
    );
    const after = T0 + 60_000 + LEASE_AFTERLIFE_MS;
    await dynamo.client.send(
      new DeleteItemCommand({ TableName: store.table, Key: keyOf.lease("schedule:a#1") }),
    );
    expect(await store.acquireLease("schedule:a#1", "host-b", after, 60_000)).toBe(true);
    expect(await store.acquireLease("schedule:a#1", "host-a", after + 1, 60_000)).toBe(false);
  });
});
