import { json, reader, requireFinite, toItem, type Item } from "./dynamo-attributes.js";
import { keyOf, padSeq } from "./dynamo-items.js";
import { DYNAMODB_LIMITS } from "./dynamo-limits.js";
import type { EvidenceRecord } from "./store.js";

// A run's evidence entries written together go in one item, a pack, rather than one item each:
// a transition makes two to five entries, and each item costs the database a write of its own
// (on DynamoDB, a write unit each; dynalite, a PutItem each). A pack holds consecutive entries
// of one run under `EVP#<first seq>#<last seq>`, so that two packs never overwrite each other; a
// lone entry keeps the item of its own (`EV#<seq>`) that the store always wrote, so items
// written before packs read as they did. Packs have a prefix of their own so that a replica of
// the build before packs, still running beside this one during a rolling deploy, lists the lone
// entries it knows and never meets an item it cannot read. Reading flattens both and keeps one
// entry per seq (a run recovering from a crash writes entries again, possibly in another pack).

/** The sort key prefix of a run's evidence items, lone (`EV#`) and packed (`EVP#`). */
export const EVIDENCE_PREFIX = "EV";

/**
 * Most UTF-8 bytes of entries in one pack: with its key and attributes, a pack stays far under
 * DynamoDB's item limit. An entry larger than this is written alone, as it always was.
 */
export const PACK_BYTES = DYNAMODB_LIMITS.itemBytes / 4;

/** One entry of a pack, as JSON text: `{"seq":…,"at":…,"entry":…}`. */
interface Packed {
  record: EvidenceRecord;
  /** The entry's own JSON, made once to size the pack; undefined when the entry is. */
  text: string | undefined;
  bytes: number;
}

/**
 * The items that hold `records`: one per run of consecutive seqs of one run, each within
 * {@link PACK_BYTES}. Every record is checked before any item is made, so a bad one fails the
 * whole write.
 */
export function encodeEvidence(records: EvidenceRecord[]): Item[] {
  return packsOf(records).map((pack) => {
    const first = pack[0];
    const last = pack[pack.length - 1];
    if (first === undefined || last === undefined) throw new Error("an empty evidence pack");
    if (pack.length === 1) {
      const { runId, seq, at } = first.record;
      return toItem(keyOf.evidence(runId, seq), {
        kind: "evidence",
        runId,
        seq,
        at,
        entry: first.text,
      });
    }
    return toItem(keyOf.evidencePack(first.record.runId, first.record.seq, last.record.seq), {
      kind: "evidence-pack",
      runId: first.record.runId,
      seq: first.record.seq,
      lastSeq: last.record.seq,
      entries: `[${pack.map(packedJson).join(",")}]`,
    });
  });
}

/** The entries of a run's evidence items (lone or packed, any mix), one per seq, in seq order. */
export function decodeEvidence(found: Item[]): EvidenceRecord[] {
  const bySeq = new Map<number, EvidenceRecord>();
  for (const item of found) {
    const read = reader(item);
    const runId = read.string("runId");
    if (!read.has("entries")) {
      const seq = read.number("seq");
      bySeq.set(seq, { runId, seq, at: read.number("at"), entry: read.json("entry") });
      continue;
    }
    for (const { seq, at, entry } of read.json("entries") as Omit<EvidenceRecord, "runId">[]) {
      bySeq.set(seq, { runId, seq, at, entry });
    }
  }
  return [...bySeq.values()].sort((a, b) => a.seq - b.seq);
}

/** `records` as packs: one entry per run and seq (the last given wins, as items would), in order. */
function packsOf(records: EvidenceRecord[]): Packed[][] {
  const unique = new Map<string, EvidenceRecord>();
  for (const record of records) {
    // A bad seq or time is refused here, before anything is written (padSeq checks the seq).
    requireFinite(record.at);
    unique.set(`${record.runId}\u0000${padSeq(record.seq)}`, record);
  }
  const ordered = [...unique.entries()].sort(([a], [b]) => (a < b ? -1 : 1));
  const packs: Packed[][] = [];
  let pack: Packed[] = [];
  let bytes = 0;
  for (const [, record] of ordered) {
    const text = json(record.entry, "entry");
    const packed = { record, text, bytes: Buffer.byteLength(packedJson({ record, text })) + 1 };
    const previous = pack[pack.length - 1]?.record;
    const follows =
      previous !== undefined &&
      previous.runId === record.runId &&
      previous.seq + 1 === record.seq &&
      bytes + packed.bytes <= PACK_BYTES;
    if (!follows && pack.length > 0) {
      packs.push(pack);
      pack = [];
      bytes = 0;
    }
    pack.push(packed);
    bytes += packed.bytes;
  }
  if (pack.length > 0) packs.push(pack);
  return packs;
}

function packedJson({ record, text }: Pick<Packed, "record" | "text">): string {
  // An undefined entry is left out, as it is from a lone item, so that it reads back undefined.
  const entry = text === undefined ? "" : `,"entry":${text}`;
  return `{"seq":${record.seq},"at":${record.at}${entry}}`;
}
