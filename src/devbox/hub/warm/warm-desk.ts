import { randomBytes, timingSafeEqual } from "node:crypto";
import type {
  WarmClaim,
  WarmIdentities,
  WarmIdentity,
  WarmReadyBody,
} from "../../warm-protocol.js";
import { warmRoute } from "../../warm-protocol.js";

/** One warm identity, as the hub keeps it. */
export interface WarmRecord {
  /** The repository (`owner/name`) its task may fetch, and nothing else. */
  repo: string;
  /** The default branch, the only one served to it. */
  branch: string;
  token: Buffer;
  state: "starting" | "ready" | "claimed" | "revoked";
  ready?: WarmReadyBody;
  /** A claim offered and not taken yet, with the offer's settling. */
  offer?: { claim: WarmClaim; settle: (taken: boolean) => void };
  /** Long-polls waiting for a claim. */
  waiters: Set<() => void>;
  /** When its last claim long-poll ended (it polls again at once while it is alive). */
  lastPollEnd?: number;
}

const DUMMY_TOKEN = Buffer.alloc(64);
/** How long a revoked or claimed identity is remembered (its task may still knock). */
const FORGET_AFTER_MS = 10 * 60_000;
/** A ready task not seen polling for this long is not offered claims (it may be gone). */
const POLL_GAP_MS = 5000;

/**
 * The hub's warm identities: each one single-use, good for its own repository's default
 * branch (read-only) and for waiting for its claim. A claim is handed to exactly one waiting
 * task, and the identity is revoked in the same step, so that it can never be used again.
 */
export class WarmDesk implements WarmIdentities {
  readonly #records = new Map<string, WarmRecord>();
  readonly #url: () => string;
  readonly #now: () => number;

  constructor(url: () => string, now: () => number = Date.now) {
    this.#url = url;
    this.#now = now;
  }

  issue(repo: string, branch: string): WarmIdentity {
    const warmId = `w${randomBytes(12).toString("hex")}`;
    const token = randomBytes(32).toString("hex");
    this.#records.set(warmId, {
      repo,
      branch,
      token: Buffer.from(token, "utf8"),
      state: "starting",
      waiters: new Set(),
    });
    const apiUrl = this.#url();
    const name = repo.replace(/\.git$/, "");
    return { warmId, token, apiUrl, gitUrl: `${apiUrl}${warmRoute(warmId, "git")}/${name}.git` };
  }

  /** Ready, and waiting for a claim now (a poll open, or one that ended a moment ago). */
  isReady(warmId: string): boolean {
    const record = this.#records.get(warmId);
    if (record?.state !== "ready") return false;
    const recent =
      record.lastPollEnd !== undefined && this.#now() - record.lastPollEnd < POLL_GAP_MS;
    return record.waiters.size > 0 || recent;
  }

  offer(warmId: string, claim: WarmClaim, timeoutMs: number): Promise<boolean> {
    const record = this.#records.get(warmId);
    if (!this.isReady(warmId) || record === undefined || record.offer !== undefined) {
      return Promise.resolve(false);
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => settle(false), timeoutMs);
      const settle = (taken: boolean) => {
        clearTimeout(timer);
        delete record.offer;
        // Not taken in time: the task is to be stopped, and must never take it late.
        if (!taken) this.revoke(warmId);
        resolve(taken);
      };
      record.offer = { claim, settle };
      this.#wake(record);
    });
  }

  revoke(warmId: string): void {
    const record = this.#records.get(warmId);
    if (record === undefined || record.state === "revoked") return;
    record.state = "revoked";
    record.offer?.settle(false);
    this.#wake(record);
    this.#forgetLater(warmId);
  }

  /** The usable record whose token `header` carries, or undefined (answer 401, say nothing). */
  authenticate(warmId: string, header: string | undefined): WarmRecord | undefined {
    const record = this.#records.get(warmId);
    const match = /^Bearer ([^\s]+)$/i.exec(header ?? "");
    const provided = Buffer.from(match?.[1] ?? "", "utf8");
    const expected = record?.token ?? DUMMY_TOKEN;
    const equal = provided.length === expected.length && timingSafeEqual(provided, expected);
    const usable = record?.state === "starting" || record?.state === "ready";
    return equal && usable ? record : undefined;
  }

  /** The task says it is cloned and set up (or that its setup failed: the claim runs it). */
  markReady(record: WarmRecord, body: WarmReadyBody): void {
    record.ready = body;
    if (record.state === "starting") record.state = "ready";
  }

  /**
   * Waits up to `waitMs` for a claim offered to `record`; takes it (revoking the identity in
   * the same step) or resolves undefined. `closed` ends the wait early (the poll went away).
   */
  async waitForClaim(
    warmId: string,
    record: WarmRecord,
    waitMs: number,
    closed: AbortSignal,
  ): Promise<WarmClaim | undefined> {
    if (record.offer === undefined && waitMs > 0 && !closed.aborted) {
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          closed.removeEventListener("abort", done);
          record.waiters.delete(done);
          resolve();
        };
        const timer = setTimeout(done, waitMs);
        closed.addEventListener("abort", done, { once: true });
        record.waiters.add(done);
      });
    }
    record.lastPollEnd = this.#now();
    const offer = record.offer;
    if (offer === undefined || record.state !== "ready" || closed.aborted) return undefined;
    record.state = "claimed";
    offer.settle(true);
    this.#forgetLater(warmId);
    return offer.claim;
  }

  /** Ends every long-poll (the hub is closing). */
  close(): void {
    for (const record of this.#records.values()) this.#wake(record);
  }

  #wake(record: WarmRecord): void {
    for (const waiter of [...record.waiters]) waiter();
  }

  #forgetLater(warmId: string): void {
    setTimeout(() => this.#records.delete(warmId), FORGET_AFTER_MS).unref();
  }
}
