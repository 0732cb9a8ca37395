import { createHash } from "node:crypto";
import { deflateRawSync, inflateRawSync } from "node:zlib";
import { marshall } from "@aws-sdk/util-dynamodb";
import { reader, type Item } from "./dynamo-attributes.js";
import { StoreError } from "./store-error.js";

// Large strings of a run's snapshot and outbox (the brief, gate feedback, output tails, judge
// material) live in their own items under the run's partition, chunked and addressed by their
// content's SHA-256, so that the run item's size is bounded by the graph and not by what users
// type or agents print. The run item keeps a reference in their place.

/** Strings over this many UTF-8 bytes leave the run item. */
export const INLINE_STRING_MAX_BYTES = 1024;
/** Compressed bytes per chunk item: well under DynamoDB's 400 KB with the key. */
const CHUNK_BYTES = 256 * 1024;
const REF = "$blob";
const REF_VALUE = /^([0-9a-f]{64})\/([1-9][0-9]*)$/;

/** A large string taken out of a value: its content hash, text, and compressed bytes. */
export interface Blob {
  hash: string;
  text: string;
  data: Buffer;
}

/**
 * `value` with every string over {@link INLINE_STRING_MAX_BYTES} replaced by a reference to its
 * blob (`{"$blob": "<sha256>/<chunks>"}`); `take` is handed each blob and says what it is.
 */
export function externalise(value: unknown, take: (text: string) => Blob): unknown {
  if (typeof value === "string") {
    // Most strings are short: the length check saves encoding them.
    if (value.length <= INLINE_STRING_MAX_BYTES / 3) return value;
    if (Buffer.byteLength(value, "utf8") <= INLINE_STRING_MAX_BYTES) return value;
    const blob = take(value);
    return { [REF]: `${blob.hash}/${chunkCount(blob)}` };
  }
  if (typeof value !== "object" || value === null) return value;
  // A value without large strings is returned as it is, not copied.
  if (Array.isArray(value)) {
    const elements: unknown[] = value;
    let copy: unknown[] | undefined;
    elements.forEach((element, index) => {
      const replaced = externalise(element, take);
      if (replaced !== element) (copy ??= [...elements])[index] = replaced;
    });
    return copy ?? value;
  }
  let copy: Record<string, unknown> | undefined;
  for (const [key, element] of Object.entries(value)) {
    const replaced = externalise(element, take);
    if (replaced !== element) (copy ??= { ...value })[key] = replaced;
  }
  return copy ?? value;
}

/** The references a value holds, by hash, with their chunk counts. */
export function referencesIn(
  value: unknown,
  found = new Map<string, number>(),
): Map<string, number> {
  const ref = asReference(value);
  if (ref !== undefined) found.set(ref.hash, ref.chunks);
  else if (Array.isArray(value)) for (const element of value) referencesIn(element, found);
  else if (typeof value === "object" && value !== null) {
    for (const element of Object.values(value)) referencesIn(element, found);
  }
  return found;
}

/** `value` with its references replaced by their text (a missing one is a corrupt run). */
export function resolve(value: unknown, texts: ReadonlyMap<string, string>): unknown {
  const ref = asReference(value);
  if (ref !== undefined) {
    const text = texts.get(ref.hash);
    if (text === undefined) {
      throw new StoreError("unknown", `Stored run refers to blob ${ref.hash}, which is missing`);
    }
    return text;
  }
  if (Array.isArray(value)) return value.map((element) => resolve(element, texts));
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(
      Object.entries(value).map(([key, element]) => [key, resolve(element, texts)]),
    );
  }
  return value;
}

/** The chunk items of a blob of run `runId`. */
export function blobItems(runId: string, blob: Blob): Item[] {
  return Array.from({ length: chunkCount(blob) }, (_, index) => ({
    ...blobKey(runId, blob.hash, index),
    ...marshall({
      kind: "blob",
      data: blob.data.subarray(index * CHUNK_BYTES, (index + 1) * CHUNK_BYTES),
    }),
  }));
}

/** The key of chunk `index` of a blob of run `runId`. */
export function blobKey(runId: string, hash: string, index: number): Item {
  return marshall({ pk: `RUN#${runId}`, sk: `BLOB#${hash}#${String(index).padStart(4, "0")}` });
}

/** Reassembles a blob's text from its chunk items (in any order). */
export function blobText(hash: string, chunks: Item[]): string {
  const ordered = chunks
    .map((item) => ({ sk: item.sk?.S ?? "", data: reader(item).binary("data") }))
    .sort((a, b) => (a.sk < b.sk ? -1 : 1));
  const text = inflateRawSync(Buffer.concat(ordered.map((chunk) => chunk.data))).toString("utf8");
  if (sha256(text) !== hash) {
    throw new StoreError("unknown", `Stored blob ${hash} does not match its content`);
  }
  return text;
}

/** A string as a blob: hashed and compressed. */
export function blobOf(text: string): Blob {
  return {
    hash: sha256(text),
    text,
    data: deflateRawSync(Buffer.from(text, "utf8"), { level: 1 }),
  };
}

function chunkCount(blob: Blob): number {
  return Math.max(1, Math.ceil(blob.data.byteLength / CHUNK_BYTES));
}

function asReference(value: unknown): { hash: string; chunks: number } | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const keys = Object.keys(value);
  const ref = (value as Record<string, unknown>)[REF];
  if (keys.length !== 1 || typeof ref !== "string") return undefined;
  const match = REF_VALUE.exec(ref);
  return match === null ? undefined : { hash: match[1] ?? "", chunks: Number(match[2]) };
}

function sha256(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}
