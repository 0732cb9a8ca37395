import { randomBytes } from "node:crypto";
import { allowedHosts } from "../../workflow/network-allow.js";
import { DevBoxError } from "../errors.js";
import type { EgressGrant } from "./egress-proxy.js";
import type { DevBoxEvent, DevBoxLostReason } from "./events.js";
import { bearerMatches, egressKey, egressKeyMatches } from "./hub-tokens.js";
import {
  createRecord,
  interruptCommand,
  unknownOutcomeOf,
  wake,
  type DevBoxRecord,
} from "./record.js";
import { SpendLedger } from "./spend-ledger.js";

/** How long the hub remembers a released or lost DevBox. */
const FORGET_AFTER_MS = 10 * 60_000;

/** What a {@link DevBoxBook} is kept with: the hub's clock, lapses and reporting. */
export interface DevBoxBookOptions {
  now: () => number;
  lapseMs: number;
  startTimeoutMs: number;
  /** The host `github` means in an allow-list (see `allowedHosts`). */
  repositoryHost: string | undefined;
  onEvent: (event: DevBoxEvent) => void;
  reportError: (error: unknown) => void;
  /** Drops what the hub's git keeps for an ended DevBox. */
  forgetGit: (devboxId: string) => Promise<void>;
}

/**
 * The hub's book of DevBoxes: their registration and tokens, their records (where the hub queues
 * their commands), their egress and spend, and their lifecycle (released, lost on a lapse, forgotten a while later).
 */
export class DevBoxBook {
  readonly #options: DevBoxBookOptions;
  readonly #devboxes = new Map<string, DevBoxRecord>();
  /** Proxied spend by run, across its DevBoxes and commands. */
  readonly spend = new SpendLedger();
  /** The hosts each DevBox may reach through the egress proxy (unset: the default list). */
  readonly #egress = new Map<string, ReadonlySet<string>>();
  /** The secret values of each DevBox's run, for the push threat check; never sent anywhere. */
  readonly #secretValues = new Map<string, readonly string[]>();

  constructor(options: DevBoxBookOptions) {
    this.#options = options;
  }

  /** The record of `devboxId`, or undefined when it is not (or no longer) registered. */
  get(devboxId: string): DevBoxRecord | undefined {
    return this.#devboxes.get(devboxId);
  }

  /** The record of `devboxId`; throws `unknown-devbox` when it is not registered. */
  record(devboxId: string): DevBoxRecord {
    const record = this.#devboxes.get(devboxId);
    if (record === undefined) {
      throw new DevBoxError("unknown-devbox", `DevBox ${devboxId} is not registered`);
    }
    return record;
  }

  /** The secret values of `devboxId`'s run: a push carrying one is refused. */
  secretValuesOf(devboxId: string): readonly string[] {
    return this.#secretValues.get(devboxId) ?? [];
  }

  /** See `DevBoxHub.register`. */
  register(input: {
    devboxId: string;
    runId: string;
    files?: Record<string, string>;
    secretValues?: readonly string[];
  }): { token: string } {
    const existing = this.#devboxes.get(input.devboxId);
    if (existing !== undefined) {
      if (existing.runId !== input.runId) {
        throw new DevBoxError("invalid-request", `DevBox ${input.devboxId} belongs to another run`);
      }
      if (existing.state === "released" || existing.state === "lost") {
        throw new DevBoxError("devbox-released", `DevBox ${input.devboxId} was ${existing.state}`);
      }
      return { token: existing.token.toString("utf8") };
    }
    const token = randomBytes(32).toString("hex");
    const record = createRecord(input.runId, token, input.files ?? {}, this.#options.now());
    this.#devboxes.set(input.devboxId, record);
    this.#secretValues.set(input.devboxId, input.secretValues ?? []);
    return { token };
  }

  /** The record whose token the request carries, or undefined (answer 401 and nothing else). */
  authenticate(devboxId: string, header: string | undefined): DevBoxRecord | undefined {
    const record = this.#devboxes.get(devboxId);
    return bearerMatches(record?.token, header) ? record : undefined;
  }

  /** See `DevBoxHub.allowEgress`. */
  allowEgress(devboxId: string, allow: readonly string[] | undefined): void {
    this.record(devboxId);
    this.#egress.set(devboxId, allowedHosts(allow, this.#options.repositoryHost));
  }

  /** The egress key of `devboxId`, which its commands' `HTTPS_PROXY` carries. */
  egressKeyOf(devboxId: string): string {
    return egressKey(this.record(devboxId).token).toString("utf8");
  }

  /** What an active DevBox whose egress key is `key` may reach; undefined: refuse. */
  egressGrant(devboxId: string, key: string): EgressGrant | undefined {
    const record = this.#devboxes.get(devboxId);
    if (!egressKeyMatches(record?.token, key) || record?.state !== "active") return undefined;
    const allowed =
      this.#egress.get(devboxId) ?? allowedHosts(undefined, this.#options.repositoryHost);
    return { allowed };
  }

  /** See `DevBoxHub.interrupt`. */
  interrupt(devboxId: string, commandId: string): void {
    const record = this.#devboxes.get(devboxId);
    if (record !== undefined) interruptCommand(record, commandId);
  }

  /** See `DevBoxHub.release`. */
  release(devboxId: string): void {
    const record = this.#devboxes.get(devboxId);
    if (record === undefined || record.state === "released") return;
    record.state = "released";
    record.endedAt = this.#options.now();
    record.pending = [];
    wake(record);
    this.#forgetGit(devboxId);
  }

  /** Wakes every long-poll (the hub is closing). */
  wakeAll(): void {
    for (const record of this.#devboxes.values()) wake(record);
  }

  /** See `DevBoxHub.checkLapses`. */
  checkLapses(): void {
    const { now: clock, lapseMs, startTimeoutMs } = this.#options;
    const now = clock();
    for (const [devboxId, record] of this.#devboxes) {
      // An ended DevBox is kept a while to tell its agent to stop, then forgotten, so a
      // long-running app does not keep every DevBox it ever ran.
      if (record.endedAt !== undefined && now - record.endedAt > FORGET_AFTER_MS) {
        this.#devboxes.delete(devboxId);
        this.spend.retain(new Set([...this.#devboxes.values()].map(({ runId }) => runId)));
        this.#egress.delete(devboxId);
        continue;
      }
      if (record.state !== "active") continue;
      if (record.lastSeenAt !== undefined && now - record.lastSeenAt > lapseMs) {
        this.#lose(devboxId, record, "heartbeat-lapsed");
      } else if (record.lastSeenAt === undefined && now - record.registeredAt > startTimeoutMs) {
        this.#lose(devboxId, record, "never-connected");
      }
    }
  }

  #forgetGit(devboxId: string): void {
    this.#secretValues.delete(devboxId);
    this.#options.forgetGit(devboxId).catch((error: unknown) => this.#options.reportError(error));
  }

  #lose(devboxId: string, record: DevBoxRecord, reason: DevBoxLostReason): void {
    const running = unknownOutcomeOf(record);
    record.state = "lost";
    record.endedAt = this.#options.now();
    record.pending = [];
    wake(record);
    this.#forgetGit(devboxId);
    try {
      this.#options.onEvent({
        type: "devbox.lost",
        devboxId,
        reason,
        ...(running === undefined ? {} : { runningCommandId: running }),
      });
    } catch (error) {
      this.#options.reportError(error);
    }
  }
}
