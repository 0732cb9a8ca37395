/**
 * The durable store's contract. One DynamoDB table holds every record kind (single-table
 * design); every run transition is one conditional write on the run's version, with no
 * transactions (the embedded server has none).
 */

/** A run as stored: the engine snapshot and the outbox of the transition that wrote it. */
export interface StoredRun {
  runId: string;
  /** Starts at 1 on create; each transition writes version + 1 on the condition version = old. */
  version: number;
  /** Owner/name of the repository, or the local path for `clustercode run`. */
  repo: string;
  workflow: string;
  /** Run status (queued, running, awaiting_input, succeeded, ...), denormalised for listing. */
  status: string;
  /** The engine snapshot, JSON-serialisable. */
  snapshot: unknown;
  /** Effects of the last transition, JSON-serialisable; performed under `runId/seq` keys. */
  outbox: unknown[];
  createdAt: number;
  updatedAt: number;
  /** The GitHub issue the run works on, if any: its runs are listed by {@link Store.listRunsOfIssue}. */
  issue?: number;
}

/** A run's listing fields, without its snapshot and outbox. */
export type RunHead = Pick<StoredRun, "runId" | "repo" | "workflow" | "status" | "createdAt">;

/** A run as an admission roster lists it. */
export type RosterEntry = Pick<StoredRun, "runId" | "status" | "createdAt">;

/** What {@link Store.admissionState} reads. */
export interface AdmissionState {
  paused: boolean;
  roster: RosterEntry[] | undefined;
}

/** One append-only evidence entry. `seq` is unique per run. */
export interface EvidenceRecord {
  runId: string;
  seq: number;
  at: number;
  entry: unknown;
}

/** Proof that the effect `runId/seq` was performed, with what it returned. */
export interface Receipt {
  runId: string;
  seq: number;
  at: number;
  result: unknown;
}

/** A timer of a run, found by due time through an index (never a scan of runs). */
export interface TimerRecord {
  runId: string;
  timerId: string;
  dueAt: number;
}

/** A webhook delivery, recorded before it is processed. */
export interface DeliveryRecord {
  deliveryId: string;
  event: string;
  payload: unknown;
  receivedAt: number;
  /** The process that recorded the delivery and processes it. */
  receivedBy?: string;
  /** Set once the delivery has been turned into engine events. */
  processedAt?: number;
}

/** Whose claim on a delivery a sweep may take over. */
export interface DeliveryTakeover {
  /** A claimer that is gone (its liveness lease lapsed). */
  from?: string;
  /** Any claim made before this time (abandoned). */
  before?: number;
}

/** One cron schedule of a workflow, as registered from a repository's default branch. */
export interface StoredSchedule {
  workflow: string;
  /** Unique in its repository; names the schedule in lease keys and run ids. */
  id: string;
  cron: string;
  /** IANA time zone of the cron (`UTC` unless the workflow says otherwise). */
  timezone: string;
  brief?: string;
  /** When it was first registered: no earlier minute is fired. */
  since: number;
}

/** The schedules of one repository. */
export interface RepositorySchedules {
  /** Owner/name. */
  repo: string;
  defaultBranch: string;
  schedules: StoredSchedule[];
}

/** The run store. Implementations: DynamoDB (and dynalite, embedded). */
/** A run-page session kept on the server: signing out deletes it, and its cookie stops working. */
export interface SessionRecord {
  /** The random id its signed cookie carries. */
  id: string;
  login: string;
  /** Epoch ms; past it the session is gone (TTL deletes it). */
  expiresAt: number;
}

export interface Store {
  /** Creates a run at version 1 (linked to its issue, if any); false when the id already exists. */
  createRun(run: StoredRun): Promise<boolean>;
  getRun(runId: string): Promise<StoredRun | undefined>;
  /** A run's stored version alone (one small consistent read); undefined when there is no run. */
  getRunVersion(runId: string): Promise<number | undefined>;
  /**
   * Writes `run` (whose version is the new one) if the stored version is `run.version - 1`;
   * false when another writer got there first.
   */
  saveRun(run: StoredRun): Promise<boolean>;
  /** Runs of a repository (newest first; at most `limit`, default 100), through an index. */
  listRuns(repo: string, options?: { limit?: number }): Promise<StoredRun[]>;
  /**
   * Runs that are not finished (all of them unless `limit`), through an index: of one
   * repository when `repo` is given, oldest first; otherwise of all, grouped by repository.
   */
  listActiveRuns(options?: { repo?: string; limit?: number }): Promise<StoredRun[]>;
  /**
   * What {@link listActiveRuns} lists, without snapshots and outboxes: a bounded few hundred
   * bytes per run, for counting, queues and recovery, which then load one run at a time. With
   * `owing`, finished runs whose outbox is not yet cleared too (recovery completes it).
   */
  listActiveRunHeads(options?: { repo?: string; owing?: boolean }): Promise<RunHead[]>;
  /** Every run of an issue of a repository, newest first, with consistent reads. */
  listRunsOfIssue(repo: string, issue: number): Promise<StoredRun[]>;

  /**
   * Writes evidence entries and receipts in one batch (one request per 25 items; not atomic
   * across requests; a run's consecutive entries may share an item); rewriting an entry or a
   * receipt with the same seq is harmless.
   */
  writeAfterEffects(evidence: EvidenceRecord[], receipts: Receipt[]): Promise<void>;
  /** A run's evidence entries, one per seq (however often written), in seq order. */
  listEvidence(runId: string): Promise<EvidenceRecord[]>;
  getReceipts(runId: string, seqs: number[]): Promise<Map<number, Receipt>>;

  putTimer(timer: TimerRecord): Promise<void>;
  deleteTimer(runId: string, timerId: string): Promise<void>;
  /** Timers due at or before `now`, oldest first (at most `limit`, default 100), through the due-time index. */
  dueTimers(now: number, limit?: number): Promise<TimerRecord[]>;
  /**
   * Deletes a due timer once its event was applied: true for the one caller that deleted it;
   * false when it was gone already or rescheduled (its `dueAt` changed) since it was listed.
   * (Firing exactly once is the run's version condition and the engine's, not this delete's.)
   */
  claimTimer(timer: TimerRecord): Promise<boolean>;

  /**
   * Records a delivery; false when its id was seen before (a duplicate or redelivery): while it
   * is unprocessed, and for 7 days after it was processed (GitHub redelivers for 3), after which
   * it is forgotten (DynamoDB's TTL deletes it; one not yet deleted is read as gone all the same).
   */
  recordDelivery(delivery: DeliveryRecord): Promise<boolean>;
  /**
   * Records deliveries together, one flag each: false when its id was recorded before (and not
   * forgotten, as {@link recordDelivery} says) or earlier in the group. Not a condition: two copies recorded at the same moment may both get
   * true, so whoever handles a delivery first wins {@link claimDelivery}.
   */
  recordDeliveries(deliveries: DeliveryRecord[]): Promise<boolean[]>;
  /**
   * Claims a recorded delivery for handling by `holder` `at`: true when nobody claimed it (or its
   * claim is over 7 days old, and forgotten), when `holder` did, or when `takeover` allows taking
   * it from its claimer; false otherwise.
   */
  claimDelivery(
    deliveryId: string,
    holder: string,
    at: number,
    takeover?: DeliveryTakeover,
  ): Promise<boolean>;
  /**
   * Who holds the claim on each of these deliveries `at`, by delivery id (strongly consistent):
   * a sweep takes a delivery over from a claimer that is gone, whoever recorded it. A delivery
   * never claimed, or whose claim was forgotten, is absent.
   */
  deliveryClaimers(deliveryIds: string[], at: number): Promise<Map<string, string>>;
  /**
   * Takes recorded deliveries out of the unprocessed list, rewriting each as processed `at`
   * (one request per 25: a processing process marks the deliveries it handled together). A
   * processed record keeps only what refuses a redelivery (its id and times), not the payload.
   */
  markDeliveriesProcessed(deliveries: DeliveryRecord[], at: number): Promise<void>;
  /**
   * Deliveries recorded but not yet processed, oldest first (default limit 100), through an
   * index; with `after`, those after that one (the next page).
   */
  unprocessedDeliveries(limit?: number, after?: DeliveryRecord): Promise<DeliveryRecord[]>;

  /**
   * Adds `usd` to the ledger of `scope` (e.g. `owner/repo#workflow#loop`) for `day` (YYYY-MM-DD,
   * UTC) atomically, and returns the new total. With `key` (the add's effect key), an add whose
   * key the ledger has seen already adds nothing and returns the total: a resent add counts once.
   */
  addCost(scope: string, day: string, usd: number, key?: string): Promise<number>;
  getCost(scope: string, day: string): Promise<number>;

  /**
   * Tries to take a named lease for `ms`: free, expired (`now` at or past its end) or already
   * held by `holder` (a renewal); true when `holder` now holds it.
   */
  acquireLease(name: string, holder: string, now: number, ms: number): Promise<boolean>;
  releaseLease(name: string, holder: string): Promise<void>;

  /** A repository's schedules; undefined when it has none. */
  getSchedules(repo: string): Promise<RepositorySchedules | undefined>;
  /** Replaces a repository's schedules (an empty list removes them). */
  putSchedules(record: RepositorySchedules): Promise<void>;
  /** Every repository's schedules, through an index. */
  listSchedules(): Promise<RepositorySchedules[]>;

  /**
   * Admission's record of `scope` (kept in the store so that every replica agrees), in one
   * read: whether it is paused, and its roster of unfinished runs, undefined until built.
   */
  admissionState(scope: string): Promise<AdmissionState>;
  setAdmissionPaused(scope: string, paused: boolean): Promise<void>;
  /** Sets run `runId`'s entry in `scope`'s roster, or removes it (`undefined`); idempotent. */
  noteInRoster(scope: string, runId: string, entry: RosterEntry | undefined): Promise<void>;
  /** Replaces `scope`'s roster with `entries` and marks it built. */
  rebuildRoster(scope: string, entries: RosterEntry[]): Promise<void>;
  /** The listing fields of those of `runIds` that exist, read consistently. */
  getRunHeads(runIds: string[]): Promise<RunHead[]>;

  /**
   * What the app last wrote to run `runId`'s GitHub surfaces (ids and fingerprints,
   * JSON-serialisable), kept beside the run so that a restart writes only what changed.
   */
  getSurfaceMemo(runId: string): Promise<unknown>;
  putSurfaceMemo(runId: string, memo: unknown): Promise<void>;

  /**
   * The setting `name`: the value set first, or `proposed` when none is (written with a
   * condition, so replicas proposing at once all read back one value).
   */
  settingOrPropose(name: string, proposed: string): Promise<string>;
  /** Keeps a run-page session until its expiry. */
  putSession(session: SessionRecord): Promise<void>;
  /** The session `id` while it lasts (`now` before its expiry). */
  getSession(id: string, now: number): Promise<SessionRecord | undefined>;
  /** Ends the session `id` (signing out); idempotent. */
  deleteSession(id: string): Promise<void>;
}
