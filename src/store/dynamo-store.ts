import { createHash } from "node:crypto";
import { DynamoDeliveries, recordOnce } from "./dynamo-deliveries.js";
import { isConditionFailed } from "./dynamo-error.js";
import * as items from "./dynamo-items.js";
import { json, reader, toItem } from "./dynamo-attributes.js";
import {
  EXPIRY_ATTRIBUTE,
  expirySeconds,
  INDEX_PARTITIONS,
  keyOf,
  LEASE_AFTERLIFE_MS,
  num,
  padTime,
  type Item,
} from "./dynamo-items.js";
import { TableRequests, type TableRequestsOptions } from "./dynamo-requests.js";
import { GSI } from "./dynamo-table.js";
import { RunBlobs } from "./run-blobs.js";
import { decodeEvidence, encodeEvidence, EVIDENCE_PREFIX } from "./evidence-packs.js";
import type {
  DeliveryRecord,
  DeliveryTakeover,
  EvidenceRecord,
  Receipt,
  RepositorySchedules,
  Store,
  AdmissionState,
  RosterEntry,
  RunHead,
  SessionRecord,
  StoredRun,
  TimerRecord,
} from "./store.js";
import { StoreError } from "./store-error.js";

/**
 * How a DynamoStore reaches its table: the client, the table name, and an optional `onRequest`
 * hook called once per DynamoDB request with its operation name and item count (to count writes
 * per transition).
 */
export type DynamoStoreOptions = TableRequestsOptions;

const DEFAULT_LIMIT = 100;
const DAY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * The store on one DynamoDB table (or dynalite). Every run transition is one conditional PutItem
 * on the run's version; evidence and receipts go in one BatchWriteItem per 25 items, a run's
 * consecutive evidence entries packed in one item (see evidence-packs.ts). A run's large
 * strings (the brief, feedback, output tails) are blob items beside it, written before the run
 * item that refers to them, so the run item stays small (see run-blobs.ts). Index reads
 * (listRuns, listActiveRuns, dueTimers, unprocessedDeliveries) are eventually consistent on
 * DynamoDB, so an entry may have just changed: claimTimer's condition and the run's version
 * condition keep that safe. Direct reads (getRun, listEvidence, getReceipts) are consistent.
 */
export class DynamoStore implements Store {
  /** Name of the table this store reads and writes. */
  readonly table: string;
  readonly #requests: TableRequests;
  readonly #blobs: RunBlobs;
  readonly #deliveries: DynamoDeliveries;

  constructor(options: DynamoStoreOptions) {
    this.table = options.table;
    this.#requests = new TableRequests(options);
    this.#blobs = new RunBlobs(this.#requests);
    this.#deliveries = new DynamoDeliveries(this.#requests);
  }

  async createRun(run: StoredRun): Promise<boolean> {
    if (run.version !== 1) {
      throw new StoreError("invalid_argument", `A new run starts at version 1, not ${run.version}`);
    }
    const encoded = this.#blobs.encode(run);
    const item = items.encodeRun(encoded.run);
    // The link and the blobs first: a crash before the run leaves a link to nothing, which
    // listing skips, and blobs nothing refers to.
    const first = [...encoded.items];
    if (run.issue !== undefined) {
      first.push({
        ...keyOf.issueRun(run.repo, run.issue, run.createdAt, run.runId),
        kind: { S: "issue-run" },
        runId: { S: run.runId },
      });
    }
    await this.#requests.batchPut(first);
    encoded.written();
    return this.#requests.put(item, { expression: "attribute_not_exists(pk)" });
  }

  async getRun(runId: string): Promise<StoredRun | undefined> {
    const item = await this.#requests.get(keyOf.run(runId));
    return item && (await this.#decodeRuns([item]))[0];
  }

  async getRunVersion(runId: string): Promise<number | undefined> {
    const item = await this.#requests.get(keyOf.run(runId), ["version"]);
    return item?.version?.N === undefined ? undefined : Number(item.version.N);
  }

  async saveRun(run: StoredRun): Promise<boolean> {
    if (!Number.isSafeInteger(run.version) || run.version < 2) {
      throw new StoreError("invalid_argument", `A saved run has version 2 or more: ${run.version}`);
    }
    // The whole run, indexes included, in one conditional PutItem: a final status simply leaves
    // out the active-runs index keys. New blobs go first, so that the run never refers to one
    // that is not there.
    const encoded = this.#blobs.encode(run);
    const item = items.encodeRun(encoded.run);
    await this.#requests.batchPut(encoded.items);
    encoded.written();
    return this.#requests.put(item, {
      expression: "#version = :old",
      names: { "#version": "version" },
      values: { ":old": num(run.version - 1) },
    });
  }

  async listRuns(repo: string, options: { limit?: number } = {}): Promise<StoredRun[]> {
    const found = await this.#queryIndex(GSI.gsi1, INDEX_PARTITIONS.repo(repo), {
      limit: options.limit ?? DEFAULT_LIMIT,
      newestFirst: true,
    });
    return this.#decodeRuns(found);
  }

  async listActiveRuns(options: { repo?: string; limit?: number } = {}): Promise<StoredRun[]> {
    const { repo } = options;
    // The index also holds finished runs whose outbox is owed (see encodeRun): they are left
    // out, so the limit applies after.
    const found = await this.#queryIndex(GSI.gsi2, INDEX_PARTITIONS.activeRuns, {
      limit: Infinity,
      ...(repo === undefined ? {} : { sortKey: { prefix: items.activeRunsPrefix(repo) } }),
    });
    // A prefix `a#` also matches a repository named `a#b` (a local path may hold `#`).
    const runs = await this.#decodeRuns(found);
    return runs
      .filter(
        (run) =>
          (repo === undefined || run.repo === repo) && !items.FINAL_RUN_STATUSES.has(run.status),
      )
      .slice(0, options.limit ?? Infinity);
  }

  async listActiveRunHeads(options: { repo?: string; owing?: boolean } = {}): Promise<RunHead[]> {
    const { repo } = options;
    const found = await this.#queryIndex(GSI.gsi2, INDEX_PARTITIONS.activeRuns, {
      limit: Infinity,
      ...(repo === undefined ? {} : { sortKey: { prefix: items.activeRunsPrefix(repo) } }),
      project: ["runId", "repo", "workflow", "status", "createdAt"],
    });
    return found
      .map(items.decodeRunHead)
      .filter(
        (run) =>
          (repo === undefined || run.repo === repo) &&
          (options.owing === true || !items.FINAL_RUN_STATUSES.has(run.status)),
      );
  }

  async listRunsOfIssue(repo: string, issue: number): Promise<StoredRun[]> {
    const links = await this.#requests.query(
      {
        KeyConditionExpression: "pk = :pk",
        ExpressionAttributeValues: { ":pk": { S: items.issuePartition(repo, issue) } },
        ScanIndexForward: false,
        ConsistentRead: true,
      },
      Infinity,
    );
    // A create that was refused (the id existed) may have left a second link to the same run,
    // and a link names the run it was written for: only that run's own issue counts.
    const runIds = [...new Set(links.map((link) => items.readS(link, "runId")))];
    const runs = await this.#decodeRuns(await this.#requests.batchGet(runIds.map(keyOf.run)));
    return runs
      .filter((run) => run.repo === repo && run.issue === issue)
      .sort((a, b) => b.createdAt - a.createdAt || (a.runId < b.runId ? 1 : -1));
  }

  async writeAfterEffects(evidence: EvidenceRecord[], receipts: Receipt[]): Promise<void> {
    // Encode everything first, so that a bad record fails the call before anything is written.
    const encoded = [...encodeEvidence(evidence), ...receipts.map(items.encodeReceipt)];
    await this.#requests.batchPut(encoded);
  }

  async listEvidence(runId: string): Promise<EvidenceRecord[]> {
    const found = await this.#requests.query({
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: {
        ":pk": { S: `RUN#${runId}` },
        ":prefix": { S: EVIDENCE_PREFIX },
      },
      ConsistentRead: true,
    });
    return decodeEvidence(found);
  }

  async getReceipts(runId: string, seqs: number[]): Promise<Map<number, Receipt>> {
    const keys = [...new Set(seqs)].map((seq) => keyOf.receipt(runId, seq));
    const found = (await this.#requests.batchGet(keys)).map(items.decodeReceipt);
    return new Map(found.map((receipt) => [receipt.seq, receipt]));
  }

  async putTimer(timer: TimerRecord): Promise<void> {
    await this.#requests.put(items.encodeTimer(timer));
  }

  async deleteTimer(runId: string, timerId: string): Promise<void> {
    await this.#requests.delete(keyOf.timer(runId, timerId));
  }

  async dueTimers(now: number, limit = DEFAULT_LIMIT): Promise<TimerRecord[]> {
    // Every index key of a timer due at or before `now` sorts below the padded `now + 1`.
    const found = await this.#queryIndex(GSI.gsi1, INDEX_PARTITIONS.timers, {
      limit,
      sortKey: { below: padTime(Math.floor(now) + 1) },
    });
    return found.map(items.decodeTimer);
  }

  async claimTimer(timer: TimerRecord): Promise<boolean> {
    // The due time is part of the condition: a timer rescheduled since it was listed stays put.
    return this.#requests.delete(keyOf.timer(timer.runId, timer.timerId), {
      expression: "#dueAt = :dueAt",
      names: { "#dueAt": "dueAt" },
      values: { ":dueAt": num(timer.dueAt) },
    });
  }

  async recordDelivery(delivery: DeliveryRecord): Promise<boolean> {
    return this.#requests.put(items.encodeDelivery(delivery), recordOnce(delivery.receivedAt));
  }

  recordDeliveries(deliveries: DeliveryRecord[]): Promise<boolean[]> {
    return this.#deliveries.record(deliveries);
  }

  claimDelivery(
    deliveryId: string,
    holder: string,
    at: number,
    takeover?: DeliveryTakeover,
  ): Promise<boolean> {
    return this.#deliveries.claim(deliveryId, holder, at, takeover);
  }

  deliveryClaimers(deliveryIds: string[], at: number): Promise<Map<string, string>> {
    return this.#deliveries.claimers(deliveryIds, at);
  }

  async markDeliveriesProcessed(deliveries: DeliveryRecord[], at: number): Promise<void> {
    // Without the index keys, a delivery leaves the sparse unprocessed index.
    await this.#requests.batchPut(
      deliveries.map((delivery) => items.encodeDelivery({ ...delivery, processedAt: at })),
    );
  }

  async unprocessedDeliveries(
    limit = DEFAULT_LIMIT,
    after?: DeliveryRecord,
  ): Promise<DeliveryRecord[]> {
    const found = await this.#queryIndex(GSI.gsi2, INDEX_PARTITIONS.unprocessedDeliveries, {
      limit,
      ...(after === undefined ? {} : { sortKey: { above: items.deliveryOrder(after) } }),
    });
    return found.map(items.decodeDelivery);
  }

  async addCost(scope: string, day: string, usd: number, key?: string): Promise<number> {
    if (!DAY.test(day)) throw new StoreError("invalid_argument", `Not a YYYY-MM-DD day: ${day}`);
    const names = { "#total": "total", "#scope": "scope", "#day": "day" };
    const values: Item = { ":usd": num(usd), ":scope": { S: scope }, ":day": { S: day } };
    try {
      const attributes = await this.#requests.update({
        Key: keyOf.ledger(scope, day),
        // ADD is applied by the database (in decimal), so concurrent adds never lose each other.
        // A keyed add also records its key in the same write, and is refused when the key is
        // there already: a resent add (the SDK's retry after a lost answer, the runtime's after
        // a crash) is counted once.
        ...(key === undefined
          ? {
              UpdateExpression: "ADD #total :usd SET #scope = :scope, #day = :day",
              ExpressionAttributeNames: names,
              ExpressionAttributeValues: values,
            }
          : {
              UpdateExpression: "ADD #total :usd, #keys :keys SET #scope = :scope, #day = :day",
              ConditionExpression: "attribute_not_exists(#keys) OR NOT contains(#keys, :key)",
              ExpressionAttributeNames: { ...names, "#keys": "keys" },
              ExpressionAttributeValues: { ...values, ":keys": { SS: [key] }, ":key": { S: key } },
            }),
        ReturnValues: "UPDATED_NEW",
      });
      return Number(attributes?.total?.N ?? "0");
    } catch (error) {
      if (key === undefined || !isConditionFailed(error)) throw error;
      return this.getCost(scope, day);
    }
  }

  async getCost(scope: string, day: string): Promise<number> {
    const item = await this.#requests.get(keyOf.ledger(scope, day));
    return Number(item?.total?.N ?? "0");
  }

  async acquireLease(name: string, holder: string, now: number, ms: number): Promise<boolean> {
    const item: Item = {
      ...keyOf.lease(name),
      kind: { S: "lease" },
      holder: { S: holder },
      expiresAt: num(now + ms),
      // An ended lease is free whether it is there or not, so TTL may delete it: leases named
      // per firing or per process (schedules, liveness) would otherwise pile up.
      [EXPIRY_ATTRIBUTE]: num(expirySeconds(now + ms + LEASE_AFTERLIFE_MS)),
    };
    return this.#requests.put(item, {
      expression: "attribute_not_exists(pk) OR #expiresAt <= :now OR #holder = :holder",
      names: { "#expiresAt": "expiresAt", "#holder": "holder" },
      values: { ":now": num(now), ":holder": { S: holder } },
    });
  }

  async releaseLease(name: string, holder: string): Promise<void> {
    // False when another holder took it after it expired: theirs now, nothing to release.
    await this.#requests.delete(keyOf.lease(name), {
      expression: "#holder = :holder",
      names: { "#holder": "holder" },
      values: { ":holder": { S: holder } },
    });
  }

  async getSchedules(repo: string): Promise<RepositorySchedules | undefined> {
    const item = await this.#requests.get(keyOf.schedules(repo));
    return item && items.decodeSchedules(item);
  }

  async putSchedules(record: RepositorySchedules): Promise<void> {
    if (record.schedules.length === 0) await this.#requests.delete(keyOf.schedules(record.repo));
    else await this.#requests.put(items.encodeSchedules(record));
  }

  async listSchedules(): Promise<RepositorySchedules[]> {
    const found = await this.#queryIndex(GSI.gsi1, INDEX_PARTITIONS.schedules, {
      limit: Infinity,
    });
    return found.map(items.decodeSchedules);
  }

  async admissionState(scope: string): Promise<AdmissionState> {
    const item = await this.#requests.get(keyOf.admission(scope));
    return {
      paused: item?.paused?.BOOL === true,
      roster: item?.roster?.BOOL === true ? items.decodeRoster(item) : undefined,
    };
  }

  async setAdmissionPaused(scope: string, paused: boolean): Promise<void> {
    await this.#requests.update({
      Key: keyOf.admission(scope),
      UpdateExpression: "SET #kind = :kind, #paused = :paused",
      ExpressionAttributeNames: { "#kind": "kind", "#paused": "paused" },
      ExpressionAttributeValues: { ":kind": { S: "admission" }, ":paused": { BOOL: paused } },
    });
  }

  async noteInRoster(scope: string, runId: string, entry: RosterEntry | undefined): Promise<void> {
    const names = { "#entry": items.rosterAttribute(runId), "#kind": "kind" };
    const kind = { ":kind": { S: "admission" } };
    await this.#requests.update(
      entry === undefined
        ? {
            Key: keyOf.admission(scope),
            UpdateExpression: "SET #kind = :kind REMOVE #entry",
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: kind,
          }
        : {
            Key: keyOf.admission(scope),
            UpdateExpression: "SET #kind = :kind, #entry = :entry",
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: { ...kind, ":entry": items.encodeRosterEntry(entry) },
          },
    );
  }

  async rebuildRoster(scope: string, entries: RosterEntry[]): Promise<void> {
    const current = await this.#requests.get(keyOf.admission(scope));
    const keep = new Set(entries.map((entry) => items.rosterAttribute(entry.runId)));
    const stale = Object.keys(current ?? {}).filter(
      (name) => items.isRosterAttribute(name) && !keep.has(name),
    );
    const names: Record<string, string> = { "#kind": "kind", "#roster": "roster" };
    const values: Item = { ":kind": { S: "admission" }, ":built": { BOOL: true } };
    const sets = ["#kind = :kind", "#roster = :built"];
    entries.forEach((entry, i) => {
      names[`#e${i}`] = items.rosterAttribute(entry.runId);
      values[`:e${i}`] = items.encodeRosterEntry(entry);
      sets.push(`#e${i} = :e${i}`);
    });
    stale.forEach((name, i) => (names[`#s${i}`] = name));
    const removes = stale.map((_, i) => `#s${i}`);
    await this.#requests.update({
      Key: keyOf.admission(scope),
      UpdateExpression: `SET ${sets.join(", ")}${removes.length > 0 ? ` REMOVE ${removes.join(", ")}` : ""}`,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    });
  }

  async getRunHeads(runIds: string[]): Promise<RunHead[]> {
    const found = await this.#requests.batchGet([...new Set(runIds)].map(keyOf.run));
    return found.map(items.decodeRunHead);
  }

  async getSurfaceMemo(runId: string): Promise<unknown> {
    const item = await this.#requests.get(keyOf.surfaceMemo(runId));
    return item === undefined ? undefined : reader(item).json("memo");
  }

  async putSurfaceMemo(runId: string, memo: unknown): Promise<void> {
    await this.#requests.put(
      toItem(keyOf.surfaceMemo(runId), { kind: "surfaces", memo: json(memo, "memo") }),
    );
  }

  async settingOrPropose(name: string, proposed: string): Promise<string> {
    const key = keyOf.setting(name);
    const item = toItem(key, { kind: "setting", value: proposed });
    if (await this.#requests.put(item, { expression: "attribute_not_exists(pk)" })) return proposed;
    const stored = await this.#requests.get(key);
    if (stored === undefined) throw new StoreError("unknown", `Setting ${name} vanished`);
    return reader(stored).string("value");
  }

  async putSession(session: SessionRecord): Promise<void> {
    await this.#requests.put(
      toItem(keyOf.session(sessionDigest(session.id)), {
        kind: "session",
        login: session.login,
        expiresAt: session.expiresAt,
        [EXPIRY_ATTRIBUTE]: expirySeconds(session.expiresAt),
      }),
    );
  }

  async getSession(id: string, now: number): Promise<SessionRecord | undefined> {
    const item = await this.#requests.get(keyOf.session(sessionDigest(id)));
    if (item === undefined) return undefined;
    const read = reader(item);
    const expiresAt = read.number("expiresAt");
    return expiresAt <= now ? undefined : { id, login: read.string("login"), expiresAt };
  }

  async deleteSession(id: string): Promise<void> {
    await this.#requests.delete(keyOf.session(sessionDigest(id)));
  }

  /** Run items read back, their large strings put back from their blobs. */
  #decodeRuns(found: Item[]): Promise<StoredRun[]> {
    return this.#blobs.decode(found.map(items.decodeRun));
  }

  #queryIndex(
    index: string,
    partition: string,
    options: {
      limit: number;
      newestFirst?: boolean;
      sortKey?: { below: string } | { above: string } | { prefix: string };
      /** Only these attributes of each item. */
      project?: string[];
    },
  ): Promise<Item[]> {
    const values: Item = { ":pk": { S: partition } };
    let condition = `${index}pk = :pk`;
    const { sortKey } = options;
    if (sortKey !== undefined && "below" in sortKey) {
      condition += ` AND ${index}sk < :sk`;
      values[":sk"] = { S: sortKey.below };
    } else if (sortKey !== undefined && "above" in sortKey) {
      condition += ` AND ${index}sk > :sk`;
      values[":sk"] = { S: sortKey.above };
    } else if (sortKey !== undefined) {
      condition += ` AND begins_with(${index}sk, :sk)`;
      values[":sk"] = { S: sortKey.prefix };
    }
    return this.#requests.query(
      {
        IndexName: index,
        KeyConditionExpression: condition,
        ExpressionAttributeValues: values,
        ScanIndexForward: options.newestFirst !== true,
        ...(options.project === undefined
          ? {}
          : {
              ProjectionExpression: options.project.map((_, i) => `#p${i}`).join(", "),
              ExpressionAttributeNames: Object.fromEntries(
                options.project.map((name, i) => [`#p${i}`, name]),
              ),
            }),
      },
      options.limit,
    );
  }
}

/** What the store keeps of a session id: its SHA-256, so the store alone names no session. */
function sessionDigest(id: string): string {
  return createHash("sha256").update(id).digest("base64url");
}
