import { DynamoDBServiceException, type AttributeValue } from "@aws-sdk/client-dynamodb";
import type { Item } from "./dynamo-attributes.js";

/**
 * DynamoDB's own request limits, as its developer guide states them. The store checks them
 * before every request so that the embedded dynalite (which counts UTF-16 characters and lets
 * larger items through) refuses exactly what AWS would.
 */
export const DYNAMODB_LIMITS = {
  /** 400 KB per item: attribute names and values in UTF-8 bytes, with type overheads. */
  itemBytes: 400 * 1024,
  partitionKeyBytes: 2048,
  sortKeyBytes: 1024,
  /** Items per BatchWriteItem (the requests are cut at this size). */
  batchWriteItems: 25,
  /** Keys per BatchGetItem (the requests are cut at this size). */
  batchGetKeys: 100,
} as const;

/** The key attributes of the store's table and indexes: which are partition and sort keys. */
const PARTITION_KEYS = ["pk", "gsi1pk", "gsi2pk"] as const;
const SORT_KEYS = ["sk", "gsi1sk", "gsi2sk"] as const;

/**
 * The size of an item by DynamoDB's rules: for every attribute, the UTF-8 bytes of its name
 * plus the size of its value (see {@link attributeValueSize}).
 */
export function itemSize(item: Item): number {
  let size = 0;
  for (const [name, value] of Object.entries(item)) size += utf8(name) + attributeValueSize(value);
  return size;
}

/**
 * The size of one value: strings in UTF-8 bytes, binaries in raw bytes, numbers 1 byte per two
 * significant digits plus 1, booleans and nulls 1 byte, sets the sum of their members, lists
 * and maps 3 bytes plus 1 byte per element (plus a map's key names) plus the elements.
 */
export function attributeValueSize(value: AttributeValue): number {
  if (value.S !== undefined) return utf8(value.S);
  if (value.N !== undefined) return numberSize(value.N);
  if (value.B !== undefined) return value.B.byteLength;
  if (value.BOOL !== undefined || value.NULL !== undefined) return 1;
  if (value.SS !== undefined) return value.SS.reduce((sum, s) => sum + utf8(s), 0);
  if (value.NS !== undefined) return value.NS.reduce((sum, n) => sum + numberSize(n), 0);
  if (value.BS !== undefined) return value.BS.reduce((sum, b) => sum + b.byteLength, 0);
  if (value.L !== undefined) {
    return value.L.reduce((sum, element) => sum + 1 + attributeValueSize(element), 3);
  }
  if (value.M !== undefined) {
    return Object.entries(value.M).reduce(
      (sum, [name, element]) => sum + 1 + utf8(name) + attributeValueSize(element),
      3,
    );
  }
  return 0;
}

/** Refuses, as DynamoDB would, an item over 400 KB or with an empty or oversized key. */
export function checkItem(item: Item): void {
  checkKey(item);
  if (itemSize(item) > DYNAMODB_LIMITS.itemBytes) {
    throw validationError("Item size has exceeded the maximum allowed size");
  }
}

/** Refuses, as DynamoDB would, key attributes (table or index) that are empty or too long. */
export function checkKey(item: Item): void {
  for (const name of PARTITION_KEYS) checkKeyValue(item, name, DYNAMODB_LIMITS.partitionKeyBytes);
  for (const name of SORT_KEYS) checkKeyValue(item, name, DYNAMODB_LIMITS.sortKeyBytes);
}

/**
 * Refuses, as DynamoDB would, a BatchWriteItem holding a refused item. Its other limits (25
 * items, 16 MB) are met by construction: requests are cut at 25 items, and 25 items of at most
 * 400 KB stay under 16 MB.
 */
export function checkBatchWrite(items: Item[]): void {
  for (const item of items) checkItem(item);
}

function checkKeyValue(item: Item, name: string, limit: number): void {
  const value = item[name]?.S;
  if (value === undefined) return;
  if (value === "") {
    throw validationError(
      `One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty string value. Key: ${name}`,
    );
  }
  if (utf8(value) > limit) {
    const which = limit === DYNAMODB_LIMITS.partitionKeyBytes ? "hashkey" : "range key";
    throw validationError(
      `One or more parameter values were invalid: Size of ${which} ${name} has exceeded the maximum size limit of ${limit} bytes`,
    );
  }
}

/** The error the SDK throws for DynamoDB's HTTP 400 ValidationException. */
function validationError(message: string): DynamoDBServiceException {
  return new DynamoDBServiceException({
    name: "ValidationException",
    $fault: "client",
    $metadata: { httpStatusCode: 400 },
    message,
  });
}

function utf8(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

/** Significant digits, leading and trailing zeros trimmed: 1 byte per two, plus 1. */
function numberSize(text: string): number {
  const mantissa = text
    .replace(/^[+-]/, "")
    .replace(/[eE].*$/, "")
    .replace(".", "");
  const digits = mantissa.replace(/^0+/, "").replace(/0+$/, "").length;
  return Math.ceil(Math.max(digits, 1) / 2) + 1;
}
