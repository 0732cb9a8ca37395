import type { AttributeValue } from "@aws-sdk/client-dynamodb";
import { convertToAttr, marshall, unmarshall } from "@aws-sdk/util-dynamodb";
import { StoreError } from "./store-error.js";

// The attribute codec of the store's items, on `@aws-sdk/util-dynamodb`. Every value is a
// top-level string, number or binary attribute (JSON documents are strings, payloads compressed
// bytes), as the store has always written them, so items written before read the same.

/** One DynamoDB item as the low-level client reads and writes it. */
export type Item = Record<string, AttributeValue>;

/** A number attribute; DynamoDB numbers are decimal strings. */
export function num(value: number): AttributeValue {
  return convertToAttr(requireFinite(value), MARSHALL);
}

/** Reads a string attribute. */
export function readS(item: Item, name: string): string {
  return reader(item).string(name);
}

/** What an item holds before marshalling: strings, numbers, bytes; undefined is left out. */
export type Fields = Record<string, string | number | Uint8Array | undefined>;

/** Undefined values are left out; numbers are written as `String(n)` always wrote them. */
const MARSHALL = { removeUndefinedValues: true, allowImpreciseNumbers: true } as const;

/** An item: its key attributes and `fields` marshalled; a non-finite number is refused. */
export function toItem(key: Item, fields: Fields): Item {
  for (const value of Object.values(fields)) if (typeof value === "number") requireFinite(value);
  return { ...key, ...marshall(fields, MARSHALL) };
}

/**
 * Reads an item's attributes by type, naming the item when one is missing; numbers as `Number`
 * reads them (never a BigInt).
 */
export function reader(item: Item) {
  const fields: Record<string, unknown> = unmarshall(item, { wrapNumbers: Number });
  const typed = <T>(name: string, type: string, is: (value: unknown) => value is T): T => {
    const value = fields[name];
    if (!is(value)) throw corrupt(item, name, type);
    return value;
  };
  return {
    has: (name: string) => fields[name] !== undefined,
    string: (name: string) => typed(name, "string", (v): v is string => typeof v === "string"),
    number: (name: string) => typed(name, "number", (v): v is number => typeof v === "number"),
    binary: (name: string) =>
      typed(name, "binary", (v): v is Uint8Array => v instanceof Uint8Array),
    /** A JSON document stored as a string; absent reads as undefined. */
    json: (name: string): unknown => {
      const text = fields[name];
      return typeof text === "string" ? JSON.parse(text) : undefined;
    },
  };
}

/** JSON as a string attribute; an `undefined` value is left out, so it reads back as undefined. */
export function json(value: unknown, name: string): string | undefined {
  return value === undefined ? undefined : toJson(value, name);
}

/** `value` as JSON text; a value JSON cannot hold is refused. */
export function toJson(value: unknown, name: string): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    throw new StoreError("invalid_argument", `The ${name} is not JSON-serialisable`, {
      cause: error,
    });
  }
  if (text === undefined) {
    throw new StoreError("invalid_argument", `The ${name} is not JSON-serialisable`);
  }
  return text;
}

/** `value`, when DynamoDB can store it as a number; else an `invalid_argument` StoreError. */
export function requireFinite(value: number): number {
  if (!Number.isFinite(value)) {
    throw new StoreError("invalid_argument", `Cannot store the number ${value}`);
  }
  return value;
}

function corrupt(item: Item, name: string, type: string): StoreError {
  const where = `${item.pk?.S ?? "?"}/${item.sk?.S ?? "?"}`;
  return new StoreError("unknown", `Stored item ${where} has no ${type} attribute "${name}"`);
}
