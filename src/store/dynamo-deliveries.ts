import * as items from "./dynamo-items.js";
import {
  DELIVERY_MEMORY_MS,
  EXPIRY_ATTRIBUTE,
  expiredAt,
  expiryOf,
  expirySeconds,
  hasExpired,
  keyOf,
  num,
  readS,
  type Item,
} from "./dynamo-items.js";
import type { Condition, TableRequests } from "./dynamo-requests.js";
import type { DeliveryRecord, DeliveryTakeover } from "./store.js";

/**
 * The condition of a delivery's first record at `now`: its id was never recorded, or its
 * record expired (processed more than {@link DELIVERY_MEMORY_MS} ago), deleted by TTL or not.
 */
export function recordOnce(now: number): Condition {
  return {
    expression: "attribute_not_exists(pk) OR #expiry <= :now",
    names: { "#expiry": EXPIRY_ATTRIBUTE },
    values: { ":now": expiredAt(now) },
  };
}

/**
 * Deliveries recorded in groups, and claimed one by one when handled. A group of one is one
 * conditional PutItem (a quiet intake's acknowledgement waits for one round trip, not two).
 * BatchWriteItem takes no condition, so a larger group's dedupe is two steps: a consistent BatchGetItem of the group's ids
 * drops those recorded before (and a repeat within the group), then one BatchWriteItem per 25
 * writes the rest. A processed delivery is thus never rewritten as unprocessed by its
 * redelivery. Two copies of one delivery recorded at the same moment (on two replicas) may both
 * pass the read and both be written (the last write wins, the same delivery either way); the
 * conditional claim, an item beside the delivery that its rewrite leaves alone, lets only one
 * of them be handled.
 *
 * A processed delivery is remembered for {@link DELIVERY_MEMORY_MS}, its claim as long from
 * when it was claimed (before it was processed, so the claim expires first); then both expire,
 * and are read as absent whether or not TTL has deleted them: what a delivery's record does
 * never depends on when DynamoDB gets round to deleting it.
 */
export class DynamoDeliveries {
  constructor(private readonly requests: TableRequests) {}

  /** One flag per delivery, in order: true when it was recorded now (at its `receivedAt`). */
  async record(deliveries: DeliveryRecord[]): Promise<boolean[]> {
    const [alone] = deliveries;
    if (deliveries.length === 1 && alone !== undefined) {
      return [await this.requests.put(items.encodeDelivery(alone), recordOnce(alone.receivedAt))];
    }
    const ids = [...new Set(deliveries.map((delivery) => delivery.deliveryId))];
    const known = new Map<string, number | undefined>(
      (await this.requests.batchGet(ids.map(keyOf.delivery))).map((item) => [
        readS(item, "deliveryId"),
        expiryOf(item),
      ]),
    );
    const fresh = deliveries.map((delivery) => {
      const { deliveryId, receivedAt } = delivery;
      if (known.has(deliveryId) && !hasExpired(known.get(deliveryId), receivedAt)) return false;
      known.set(deliveryId, undefined);
      return true;
    });
    const written = deliveries.filter((_, i) => fresh[i]);
    if (written.length > 0) await this.requests.batchPut(written.map(items.encodeDelivery));
    return fresh;
  }

  /**
   * The holder of each delivery's claim, by delivery id, read consistently in BatchGetItem
   * requests of up to 100 keys; a delivery never claimed (or whose claim expired by `at`) has
   * none.
   */
  async claimers(deliveryIds: string[], at: number): Promise<Map<string, string>> {
    const ids = [...new Set(deliveryIds)];
    if (ids.length === 0) return new Map();
    const idOf = new Map(ids.map((id) => [readS(keyOf.deliveryClaim(id), "pk"), id]));
    const found = await this.requests.batchGet(ids.map(keyOf.deliveryClaim));
    const claimers = new Map<string, string>();
    for (const item of found) {
      const id = idOf.get(readS(item, "pk"));
      if (id !== undefined && !hasExpired(expiryOf(item), at)) {
        claimers.set(id, readS(item, "holder"));
      }
    }
    return claimers;
  }

  /**
   * A conditional put of the claim: free (never claimed, or its claim expired), already this
   * holder's, or one `takeover` allows. The claim names its holder (`holder`), so that a sweep
   * can tell a dead claimer's delivery from a live one's ({@link claimers}).
   */
  async claim(
    deliveryId: string,
    holder: string,
    at: number,
    takeover: DeliveryTakeover = {},
  ): Promise<boolean> {
    const item: Item = {
      ...keyOf.deliveryClaim(deliveryId),
      kind: { S: "delivery-claim" },
      holder: { S: holder },
      claimedAt: num(at),
      [EXPIRY_ATTRIBUTE]: num(expirySeconds(at + DELIVERY_MEMORY_MS)),
    };
    const allowed = ["attribute_not_exists(pk)", "#expiry <= :now", "#holder = :holder"];
    const values: Item = { ":holder": { S: holder }, ":now": expiredAt(at) };
    if (takeover.from !== undefined) {
      allowed.push("#holder = :from");
      values[":from"] = { S: takeover.from };
    }
    if (takeover.before !== undefined) {
      allowed.push("#claimedAt < :before");
      values[":before"] = num(takeover.before);
    }
    return this.requests.put(item, {
      expression: allowed.join(" OR "),
      names: {
        "#holder": "holder",
        "#expiry": EXPIRY_ATTRIBUTE,
        ...(takeover.before === undefined ? {} : { "#claimedAt": "claimedAt" }),
      },
      values,
    });
  }
}
