import { FINAL_STATUSES } from "../engine/model.js";
import { deflateRawSync, inflateRawSync } from "node:zlib";
import { marshall } from "@aws-sdk/util-dynamodb";
import type {
  DeliveryRecord,
  Receipt,
  RepositorySchedules,
  RosterEntry,
  RunHead,
  StoredRun,
  StoredSchedule,
  TimerRecord,
} from "./store.js";
import { json, num, reader, toItem, toJson, type Item } from "./dynamo-attributes.js";
import { StoreError } from "./store-error.js";

// The attribute helpers the store and its requests use along with the item layouts.
export { num, readS, type Item } from "./dynamo-attributes.js";

/** Run statuses after which a run leaves the active-runs index: the engine's final ones. */
export const FINAL_RUN_STATUSES: ReadonlySet<string> = new Set(FINAL_STATUSES);

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

/**
 * The attribute DynamoDB's TTL deletes an item by, in epoch seconds (`ttl`, as the table in
 * infra/ enables it; a test keeps the two equal). The store writes it only on items needed for a
 * bounded time: processed deliveries and their claims, and leases. An item past it is read as
 * gone whether or not it was deleted yet (TTL deletes within days; dynalite never does).
 */
export const EXPIRY_ATTRIBUTE = "ttl";

/**
 * How long a processed delivery's id is remembered, so that its redelivery is refused: GitHub
 * lets a delivery be redelivered for 3 days; 7 days covers that with room.
 */
export const DELIVERY_MEMORY_MS = 7 * 86_400_000;

/** How long an ended lease is kept before TTL may delete it (for operators to see it). */
export const LEASE_AFTERLIFE_MS = 86_400_000;

/** The expiry attribute's value for `ms`, epoch milliseconds: whole seconds, rounded up. */
export function expirySeconds(ms: number): number {
  return Math.ceil(requireNatural(Math.ceil(ms), "expiry") / 1000);
}

/** Whether an item with expiry `seconds` (undefined: none) has expired at `now` (ms). */
export function hasExpired(seconds: number | undefined, now: number): boolean {
  return seconds !== undefined && seconds * 1000 <= now;
}

/** The condition value that an item with an expiry attribute has expired at `now` (ms). */
export function expiredAt(now: number): Item[string] {
  return num(Math.floor(now / 1000));
}

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
  /** Consecutive evidence entries `first` to `last` of a run, in one item (see evidence-packs.ts). */
  evidencePack: (runId: string, first: number, last: number): Item =>
    key(`RUN#${runId}`, `EVP#${padSeq(first)}#${padSeq(last)}`),
  receipt: (runId: string, seq: number): Item => key(`RUN#${runId}`, `RCPT#${padSeq(seq)}`),
  timer: (runId: string, timerId: string): Item => key(`RUN#${runId}`, `TIMER#${timerId}`),
  /** What the app last wrote to the run's GitHub surfaces. */
  surfaceMemo: (runId: string): Item => key(`RUN#${runId}`, "SURFACES"),
  delivery: (deliveryId: string): Item => key(`DELIVERY#${deliveryId}`, "DELIVERY"),
  /** Who handles a delivery: beside it, so that rewriting the delivery leaves the claim. */
  deliveryClaim: (deliveryId: string): Item => key(`DELIVERY#${deliveryId}`, "CLAIM"),
  ledger: (scope: string, day: string): Item => key(`LEDGER#${scope}#${day}`, "LEDGER"),
  lease: (name: string): Item => key(`LEASE#${name}`, "LEASE"),
  /** One setting the replicas share (the run pages' session secret). */
  setting: (name: string): Item => key(`SETTING#${name}`, "SETTING"),
  /** A run-page session, by a digest of its id (the id itself is only in the cookie). */
  session: (digest: string): Item => key(`SESSION#${digest}`, "SESSION"),
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

/**
 * The run item: indexed by repository always, and as active while its status is not final or
 * its outbox is not yet cleared (the effects of its final transition may not all be done: a
 * restart must find it to complete them).
 */
export function encodeRun(run: StoredRun): Item {
  const active = !FINAL_RUN_STATUSES.has(run.status) || run.outbox.length > 0;
  return toItem(keyOf.run(run.runId), {
    kind: "run",
    runId: run.runId,
    version: requireNatural(run.version, "version"),
    repo: run.repo,
    workflow: run.workflow,
    status: run.status,
    snapshot: json(run.snapshot, "snapshot"),
    outbox: toJson(run.outbox, "outbox"),
    createdAt: run.createdAt,
    updatedAt: run.updatedAt,
    gsi1pk: INDEX_PARTITIONS.repo(run.repo),
    gsi1sk: `${padTime(run.createdAt)}#${run.runId}`,
    issue: run.issue === undefined ? undefined : requireNatural(run.issue, "issue"),
    gsi2pk: active ? INDEX_PARTITIONS.activeRuns : undefined,
    gsi2sk: active
      ? `${activeRunsPrefix(run.repo)}${padTime(run.createdAt)}#${run.runId}`
      : undefined,
  });
}

/** A run's attribute in its admission scope's item: `run#<id>`, an `<status>@<createdAt>`. */
export function rosterAttribute(runId: string): string {
  return `run#${runId}`;
}

export function isRosterAttribute(name: string): boolean {
  return name.startsWith("run#");
}

export function encodeRosterEntry(entry: RosterEntry): Item[string] {
  return { S: `${entry.status}@${entry.createdAt}` };
}

/** The roster entries of an admission scope's item. */
export function decodeRoster(item: Item): RosterEntry[] {
  return Object.entries(item).flatMap(([name, value]) => {
    if (!isRosterAttribute(name) || value.S === undefined) return [];
    const at = value.S.lastIndexOf("@");
    return [
      {
        runId: name.slice("run#".length),
        status: value.S.slice(0, at),
        createdAt: Number(value.S.slice(at + 1)),
      },
    ];
  });
}

/** Reads the listing fields of a run item (or of its projection). */
export function decodeRunHead(item: Item): RunHead {
  const read = reader(item);
  return {
    runId: read.string("runId"),
    repo: read.string("repo"),
    workflow: read.string("workflow"),
    status: read.string("status"),
    createdAt: read.number("createdAt"),
  };
}

/** Reads a run item back. */
export function decodeRun(item: Item): StoredRun {
  const read = reader(item);
  const run: StoredRun = {
    ...decodeRunHead(item),
    version: read.number("version"),
    snapshot: read.json("snapshot"),
    outbox: read.json("outbox") as unknown[],
    updatedAt: read.number("updatedAt"),
  };
  if (read.has("issue")) run.issue = read.number("issue");
  return run;
}

/** A repository's schedules, listed through gsi1. */
export function encodeSchedules(record: RepositorySchedules): Item {
  return toItem(keyOf.schedules(record.repo), {
    kind: "schedules",
    repo: record.repo,
    defaultBranch: record.defaultBranch,
    schedules: json(record.schedules, "schedules"),
    gsi1pk: INDEX_PARTITIONS.schedules,
    gsi1sk: record.repo,
  });
}

/** Reads a repository's schedules back. */
export function decodeSchedules(item: Item): RepositorySchedules {
  const read = reader(item);
  return {
    repo: read.string("repo"),
    defaultBranch: read.string("defaultBranch"),
    schedules: read.json("schedules") as StoredSchedule[],
  };
}

/** A receipt under its run, keyed by the effect's seq. */
export function encodeReceipt(receipt: Receipt): Item {
  return toItem(keyOf.receipt(receipt.runId, receipt.seq), {
    kind: "receipt",
    runId: receipt.runId,
    seq: receipt.seq,
    at: receipt.at,
    result: json(receipt.result, "result"),
  });
}

/** Reads a receipt item back. */
export function decodeReceipt(item: Item): Receipt {
  const read = reader(item);
  return {
    runId: read.string("runId"),
    seq: read.number("seq"),
    at: read.number("at"),
    result: read.json("result"),
  };
}

/** A timer under its run, and in the due-time index (gsi1) ordered by due time. */
export function encodeTimer(timer: TimerRecord): Item {
  return toItem(keyOf.timer(timer.runId, timer.timerId), {
    kind: "timer",
    runId: timer.runId,
    timerId: timer.timerId,
    dueAt: timer.dueAt,
    gsi1pk: INDEX_PARTITIONS.timers,
    gsi1sk: `${padTime(timer.dueAt)}#${timer.runId}#${timer.timerId}`,
  });
}

/** Reads a timer item back. */
export function decodeTimer(item: Item): TimerRecord {
  const read = reader(item);
  return {
    runId: read.string("runId"),
    timerId: read.string("timerId"),
    dueAt: read.number("dueAt"),
  };
}

/** Where a delivery sorts in the unprocessed index: by arrival, then id. */
export function deliveryOrder(delivery: DeliveryRecord): string {
  return `${padTime(delivery.receivedAt)}#${delivery.deliveryId}`;
}

/**
 * A delivery, in the unprocessed index (gsi2) until it is processed; once processed it expires
 * {@link DELIVERY_MEMORY_MS} later (an unprocessed one never does: it is work still owed).
 */
export function encodeDelivery(delivery: DeliveryRecord): Item {
  const unprocessed = delivery.processedAt === undefined;
  return toItem(keyOf.delivery(delivery.deliveryId), {
    kind: "delivery",
    deliveryId: delivery.deliveryId,
    event: delivery.event,
    // Compressed: webhook payloads are verbose JSON (about 12 KB for a comment), and DynamoDB
    // bills writes by the KB; the embedded store also spends its time on bytes. Once processed,
    // nothing reads the payload again: the record only refuses a redelivery.
    payloadZ: unprocessed
      ? deflateRawSync(toJson(delivery.payload, "payload"), { level: 1 })
      : undefined,
    receivedAt: delivery.receivedAt,
    receivedBy: delivery.receivedBy,
    gsi2pk: unprocessed ? INDEX_PARTITIONS.unprocessedDeliveries : undefined,
    gsi2sk: unprocessed ? deliveryOrder(delivery) : undefined,
    processedAt: delivery.processedAt,
    [EXPIRY_ATTRIBUTE]:
      delivery.processedAt === undefined
        ? undefined
        : expirySeconds(delivery.processedAt + DELIVERY_MEMORY_MS),
  });
}

/** An item's expiry (epoch seconds), undefined when it has none. */
export function expiryOf(item: Item): number | undefined {
  const read = reader(item);
  return read.has(EXPIRY_ATTRIBUTE) ? read.number(EXPIRY_ATTRIBUTE) : undefined;
}

/** Reads a delivery item back. */
export function decodeDelivery(item: Item): DeliveryRecord {
  const read = reader(item);
  const record: DeliveryRecord = {
    deliveryId: read.string("deliveryId"),
    event: read.string("event"),
    // A processed record keeps no payload (see encodeDelivery).
    payload: read.has("payloadZ")
      ? JSON.parse(inflateRawSync(read.binary("payloadZ")).toString("utf8"))
      : null,
    receivedAt: read.number("receivedAt"),
  };
  if (read.has("receivedBy")) record.receivedBy = read.string("receivedBy");
  if (read.has("processedAt")) record.processedAt = read.number("processedAt");
  return record;
}

function key(pk: string, sk: string): Item {
  return marshall({ pk, sk });
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
