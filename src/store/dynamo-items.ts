import { deflateRawSync, inflateRawSync } from "node:zlib";
import type { AttributeValue } from "@aws-sdk/client-dynamodb";
import type {
  DeliveryRecord,
  EvidenceRecord,
  Receipt,
  RepositorySchedules,
  StoredRun,
  StoredSchedule,
  TimerRecord,
} from "./store.js";
import { StoreError } from "./store-error.js";

/** One DynamoDB item as the low-level client reads and writes it. */
export type Item = Record<string, AttributeValue>;

/** Run statuses after which a run leaves the active-runs index. */
export const FINAL_RUN_STATUSES: ReadonlySet<string> = new Set([
  "succeeded",
  "failed",
  "cancelled",
  "escalated",
]);

/** Partition keys of the two overloaded global secondary indexes. */
export const INDEX_PARTITIONS = {
  /** gsi1: timers by due time. */
  timers: "TIMERS",
  /** gsi2: runs whose status is not final, by repository, oldest first within one. */
  activeRuns: "RUNS#ACTIVE",
  /** gsi2: deliveries not yet processed, oldest first. */
  unprocessedDeliveries: "DELIVERIES#UNPROCESSED",
  /** gsi1: the repositories that have schedules. */
  schedules: "SCHEDULES",
  /** gsi1: runs of one repository, by creation time. */
  repo: (repo: string): string => `REPO#${repo}`,
} as const;

/** Zero-padded so that string order is number order (15 digits: ms until year 33658). */
export function padTime(ms: number): string {
  return String(requireNatural(ms, "time")).padStart(15, "0");
}

/** Zero-padded sequence number (10 digits). */
export function padSeq(seq: number): string {
  return String(requireNatural(seq, "seq")).padStart(10, "0");
}

/** Primary keys (`pk`, `sk`) of every record kind. */
export const keyOf = {
  run: (runId: string): Item => key(`RUN#${runId}`, "RUN"),
  evidence: (runId: string, seq: number): Item => key(`RUN#${runId}`, `EV#${padSeq(seq)}`),
  receipt: (runId: string, seq: number): Item => key(`RUN#${runId}`, `RCPT#${padSeq(seq)}`),
  timer: (runId: string, timerId: string): Item => key(`RUN#${runId}`, `TIMER#${timerId}`),
  delivery: (deliveryId: string): Item => key(`DELIVERY#${deliveryId}`, "DELIVERY"),
  ledger: (scope: string, day: string): Item => key(`LEDGER#${scope}#${day}`, "LEDGER"),
  lease: (name: string): Item => key(`LEASE#${name}`, "LEASE"),
  admission: (scope: string): Item => key(`ADMISSION#${scope}`, "ADMISSION"),
  schedules: (repo: string): Item => key(`SCHEDULES#${repo}`, "SCHEDULES"),
  /** Links a run to its issue; the sort key orders an issue's runs by creation time. */
  issueRun: (repo: string, issue: number, createdAt: number, runId: string): Item =>
    key(issuePartition(repo, issue), `RUN#${padTime(createdAt)}#${runId}`),
};

/** Partition key of an issue's run links. */
export function issuePartition(repo: string, issue: number): string {
  return `ISSUE#${repo}#${requireNatural(issue, "issue")}`;
}

/** The gsi2 sort key prefix of one repository's active runs. */
export function activeRunsPrefix(repo: string): string {
  return `${repo}#`;
}

/** The run item: indexed by repository always, and as active while its status is not final. */
export function encodeRun(run: StoredRun): Item {
  const item: Item = {
    ...keyOf.run(run.runId),
    kind: { S: "run" },
    runId: { S: run.runId },
    version: num(requireNatural(run.version, "version")),
    repo: { S: run.repo },
    workflow: { S: run.workflow },
    status: { S: run.status },
    ...json("snapshot", run.snapshot),
    outbox: { S: toJson(run.outbox, "outbox") },
    createdAt: num(run.createdAt),
    updatedAt: num(run.updatedAt),
    gsi1pk: { S: INDEX_PARTITIONS.repo(run.repo) },
    gsi1sk: { S: `${padTime(run.createdAt)}#${run.runId}` },
  };
  if (run.issue !== undefined) item.issue = num(requireNatural(run.issue, "issue"));
  if (!FINAL_RUN_STATUSES.has(run.status)) {
    item.gsi2pk = { S: INDEX_PARTITIONS.activeRuns };
    item.gsi2sk = { S: `${activeRunsPrefix(run.repo)}${padTime(run.createdAt)}#${run.runId}` };
  }
  return item;
}

/** Reads a run item back. */
export function decodeRun(item: Item): StoredRun {
  const run: StoredRun = {
    runId: readS(item, "runId"),
    version: readN(item, "version"),
    repo: readS(item, "repo"),
    workflow: readS(item, "workflow"),
    status: readS(item, "status"),
    snapshot: readJson(item, "snapshot"),
    outbox: readJson(item, "outbox") as unknown[],
    createdAt: readN(item, "createdAt"),
    updatedAt: readN(item, "updatedAt"),
  };
  if (item.issue !== undefined) run.issue = readN(item, "issue");
  return run;
}

/** A repository's schedules, listed through gsi1. */
export function encodeSchedules(record: RepositorySchedules): Item {
  return {
    ...keyOf.schedules(record.repo),
    kind: { S: "schedules" },
    repo: { S: record.repo },
    defaultBranch: { S: record.defaultBranch },
    ...json("schedules", record.schedules),
    gsi1pk: { S: INDEX_PARTITIONS.schedules },
    gsi1sk: { S: record.repo },
  };
}

/** Reads a repository's schedules back. */
export function decodeSchedules(item: Item): RepositorySchedules {
  return {
    repo: readS(item, "repo"),
    defaultBranch: readS(item, "defaultBranch"),
    schedules: readJson(item, "schedules") as StoredSchedule[],
  };
}

/** An evidence entry under its run, sorted by seq. */
export function encodeEvidence(record: EvidenceRecord): Item {
  return {
    ...keyOf.evidence(record.runId, record.seq),
    kind: { S: "evidence" },
    runId: { S: record.runId },
    seq: num(record.seq),
    at: num(record.at),
    ...json("entry", record.entry),
  };
}

/** Reads an evidence item back. */
export function decodeEvidence(item: Item): EvidenceRecord {
  return {
    runId: readS(item, "runId"),
    seq: readN(item, "seq"),
    at: readN(item, "at"),
    entry: readJson(item, "entry"),
  };
}

/** A receipt under its run, keyed by the effect's seq. */
export function encodeReceipt(receipt: Receipt): Item {
  return {
    ...keyOf.receipt(receipt.runId, receipt.seq),
    kind: { S: "receipt" },
    runId: { S: receipt.runId },
    seq: num(receipt.seq),
    at: num(receipt.at),
    ...json("result", receipt.result),
  };
}

/** Reads a receipt item back. */
export function decodeReceipt(item: Item): Receipt {
  return {
    runId: readS(item, "runId"),
    seq: readN(item, "seq"),
    at: readN(item, "at"),
    result: readJson(item, "result"),
  };
}

/** A timer under its run, and in the due-time index (gsi1) ordered by due time. */
export function encodeTimer(timer: TimerRecord): Item {
  return {
    ...keyOf.timer(timer.runId, timer.timerId),
    kind: { S: "timer" },
    runId: { S: timer.runId },
    timerId: { S: timer.timerId },
    dueAt: num(timer.dueAt),
    gsi1pk: { S: INDEX_PARTITIONS.timers },
    gsi1sk: { S: `${padTime(timer.dueAt)}#${timer.runId}#${timer.timerId}` },
  };
}

/** Reads a timer item back. */
export function decodeTimer(item: Item): TimerRecord {
  return {
    runId: readS(item, "runId"),
    timerId: readS(item, "timerId"),
    dueAt: readN(item, "dueAt"),
  };
}

/** A delivery, in the unprocessed index (gsi2) until it is processed. */
export function encodeDelivery(delivery: DeliveryRecord): Item {
  const item: Item = {
    ...keyOf.delivery(delivery.deliveryId),
    kind: { S: "delivery" },
    deliveryId: { S: delivery.deliveryId },
    event: { S: delivery.event },
    // Compressed: webhook payloads are verbose JSON (about 12 KB for a comment), and DynamoDB
    // bills writes by the KB; the embedded store also spends its time on bytes.
    payloadZ: { B: deflateRawSync(toJson(delivery.payload, "payload"), { level: 1 }) },
    receivedAt: num(delivery.receivedAt),
  };
  if (delivery.receivedBy !== undefined) item.receivedBy = { S: delivery.receivedBy };
  if (delivery.processedAt === undefined) {
    item.gsi2pk = { S: INDEX_PARTITIONS.unprocessedDeliveries };
    item.gsi2sk = { S: `${padTime(delivery.receivedAt)}#${delivery.deliveryId}` };
  } else {
    item.processedAt = num(delivery.processedAt);
  }
  return item;
}

/** Reads a delivery item back. */
export function decodeDelivery(item: Item): DeliveryRecord {
  const record: DeliveryRecord = {
    deliveryId: readS(item, "deliveryId"),
    event: readS(item, "event"),
    payload: readCompressedJson(item, "payloadZ"),
    receivedAt: readN(item, "receivedAt"),
  };
  if (item.receivedBy !== undefined) record.receivedBy = readS(item, "receivedBy");
  if (item.processedAt !== undefined) record.processedAt = readN(item, "processedAt");
  return record;
}

/** A number attribute; DynamoDB numbers are decimal strings. */
export function num(value: number): AttributeValue {
  if (!Number.isFinite(value)) {
    throw new StoreError("invalid_argument", `Cannot store the number ${value}`);
  }
  return { N: String(value) };
}

/** Reads a number attribute. */
export function readN(item: Item, name: string): number {
  const value = item[name]?.N;
  if (value === undefined) throw corrupt(item, name, "number");
  return Number(value);
}

/** Reads a string attribute. */
export function readS(item: Item, name: string): string {
  const value = item[name]?.S;
  if (value === undefined) throw corrupt(item, name, "string");
  return value;
}

/**
 * JSON as a string attribute; an `undefined` value is left out, so it reads back as undefined
 * instead of being marshalled into something else.
 */
function json(name: string, value: unknown): Item {
  return value === undefined ? {} : { [name]: { S: toJson(value, name) } };
}

function toJson(value: unknown, name: string): string {
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

function readJson(item: Item, name: string): unknown {
  const text = item[name]?.S;
  return text === undefined ? undefined : JSON.parse(text);
}

function readCompressedJson(item: Item, name: string): unknown {
  const bytes = item[name]?.B;
  if (bytes === undefined) throw corrupt(item, name, "binary");
  return JSON.parse(inflateRawSync(bytes).toString("utf8"));
}

function key(pk: string, sk: string): Item {
  return { pk: { S: pk }, sk: { S: sk } };
}

function requireNatural(value: number, what: string): number {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new StoreError(
      "invalid_argument",
      `The ${what} must be a non-negative integer: ${value}`,
    );
  }
  return value;
}

function corrupt(item: Item, name: string, type: string): StoreError {
  const where = `${item.pk?.S ?? "?"}/${item.sk?.S ?? "?"}`;
  return new StoreError("unknown", `Stored item ${where} has no ${type} attribute "${name}"`);
}
