import { describe, expect, it } from "vitest";
import { marshall } from "@aws-sdk/util-dynamodb";
import { createTable } from "../../src/store/dynamo-table.js";
import { attributeValueSize, itemSize } from "../../src/store/dynamo-limits.js";
import { TableRequests } from "../../src/store/dynamo-requests.js";
import type { Item } from "../../src/store/dynamo-attributes.js";
import { useTestDynamo } from "./dynalite-fixture.js";

const dynamo = useTestDynamo();
const containing = (text: string): unknown => expect.stringContaining(text);

async function requestsOnNewTable(): Promise<TableRequests> {
  const table = `limits_${process.pid}_${Math.random().toString(36).slice(2)}`;
  await createTable(dynamo.client, table);
  return new TableRequests({ client: dynamo.client, table });
}

/** An item of exactly `bytes` by DynamoDB's rules, its filler made of `char`. */
function itemOf(bytes: number, char: string): Item {
  const key = { pk: { S: "P" }, sk: { S: "S" } };
  const base = itemSize({ ...key, v: { S: "" } });
  const width = Buffer.byteLength(char, "utf8");
  const fill = bytes - base;
  if (fill % width !== 0) throw new Error("the filler does not divide the size");
  return { ...key, v: { S: char.repeat(fill / width) } };
}

describe("DynamoDB's item size rules", () => {
  // The rules of "DynamoDB item sizes and formats" in the DynamoDB Developer Guide.
  it("counts strings and attribute names in UTF-8 bytes", () => {
    expect(itemSize({ Name: { S: "Hello" } })).toBe(4 + 5);
    expect(itemSize({ é: { S: "漢字" } })).toBe(2 + 6);
    expect(itemSize({ emoji: { S: "😀" } })).toBe(5 + 4);
  });

  it("counts numbers as 1 byte per two significant digits plus 1, zeros trimmed", () => {
    expect(attributeValueSize({ N: "7" })).toBe(2);
    expect(attributeValueSize({ N: "123" })).toBe(3);
    expect(attributeValueSize({ N: "1234" })).toBe(3);
    expect(attributeValueSize({ N: "0.00100" })).toBe(2);
    expect(attributeValueSize({ N: "-1500000" })).toBe(2);
    expect(attributeValueSize({ N: "1734567890123" })).toBe(8);
  });

  it("counts binaries in raw bytes, booleans and nulls as 1 byte", () => {
    expect(itemSize({ b: { B: new Uint8Array(10) } })).toBe(1 + 10);
    expect(itemSize({ ok: { BOOL: true }, no: { NULL: true } })).toBe(2 + 1 + 2 + 1);
  });

  it("adds 3 bytes per list or map and 1 byte per element", () => {
    expect(itemSize({ l: { L: [] } })).toBe(1 + 3);
    expect(itemSize({ l: { L: [{ S: "a" }, { S: "bc" }] } })).toBe(1 + 3 + (1 + 1) + (1 + 2));
    expect(itemSize({ m: { M: { a: { S: "x" } } } })).toBe(1 + 3 + 1 + 1 + 1);
    expect(itemSize(marshall({ tags: new Set(["ab", "c"]) }))).toBe(4 + 3);
  });
});

describe("the store's requests refuse what DynamoDB refuses", () => {
  it("accepts an item of exactly 400 KB and refuses one byte more, in UTF-8 bytes", async () => {
    const requests = await requestsOnNewTable();
    expect(await requests.put(itemOf(409_600, "a"))).toBe(true);
    const refused = requests.put(itemOf(409_601, "a"));
    await expect(refused).rejects.toMatchObject({
      name: "StoreError",
      code: "invalid_request",
      retryable: false,
      message:
        "DynamoDB PutItem failed: ValidationException: Item size has exceeded the maximum allowed size",
    });
  });

  it("refuses a CJK item dynalite would take: its size is in bytes, not characters", async () => {
    const requests = await requestsOnNewTable();
    // 140,000 characters of 3 bytes each: 420,000 bytes, over 400 KB (dynalite counts 140,000).
    const item = { pk: { S: "P" }, sk: { S: "S" }, v: { S: "漢".repeat(140_000) } };
    await expect(requests.put(item)).rejects.toMatchObject({ code: "invalid_request" });
    await expect(requests.batchPut([item])).rejects.toMatchObject({
      code: "invalid_request",
      message: containing("BatchWriteItem failed: ValidationException"),
    });
    expect(await requests.get({ pk: { S: "P" }, sk: { S: "S" } })).toBeUndefined();
  });

  it("refuses keys over 2048 bytes (partition) and 1024 bytes (sort), and empty keys", async () => {
    const requests = await requestsOnNewTable();
    const long = (bytes: number) => "k".repeat(bytes);
    expect(await requests.put({ pk: { S: long(2048) }, sk: { S: long(1024) } })).toBe(true);
    await expect(requests.put({ pk: { S: long(2049) }, sk: { S: "s" } })).rejects.toMatchObject({
      code: "invalid_request",
      message: containing("Size of hashkey pk has exceeded"),
    });
    await expect(requests.get({ pk: { S: "p" }, sk: { S: long(1025) } })).rejects.toMatchObject({
      code: "invalid_request",
      message: containing("Size of range key sk has exceeded"),
    });
    const indexKey = { pk: { S: "p" }, sk: { S: "s" }, gsi1sk: { S: "é".repeat(513) } };
    await expect(requests.put(indexKey)).rejects.toMatchObject({ code: "invalid_request" });
    await expect(requests.put({ pk: { S: "" }, sk: { S: "s" } })).rejects.toMatchObject({
      message: containing("cannot contain an empty string value"),
    });
  });
});
