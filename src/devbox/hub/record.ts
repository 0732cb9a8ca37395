import type { ServerResponse } from "node:http";
import type { CommandRequest } from "../../engine/commands.js";
import { DevBoxError } from "../errors.js";
import type { ProxyGrant } from "./provider-proxy.js";
import type { DevBoxCacheScope } from "./cache/cache-route.js";
import { isValidFileName, MAX_WAIT_SECONDS, type HeartbeatResponse } from "../protocol.js";

/** What the hub knows about one registered DevBox. */
export interface DevBoxRecord {
  runId: string;
  token: Buffer;
  /** Files given to every command of the DevBox. */
  files: Record<string, string>;
  registeredAt: number;
  /** Last authenticated request; undefined until the agent first calls. */
  lastSeenAt: number | undefined;
  /** The command the last heartbeat said was running. */
  running: string | undefined;
  /** "failed": its setup failed, so it is not watched for lapses. */
  state: "active" | "failed" | "released" | "lost";
  /** When it was released or lost; the hub forgets it a while later. */
  endedAt?: number;
  readyReported: boolean;
  /** Dispatched and without a result yet, in dispatch order; redelivered on every poll. */
  pending: CommandRequest[];
  dispatched: Set<string>;
  delivered: Set<string>;
  finished: Set<string>;
  /** Commands the runtime wants stopped; the heartbeat tells the agent. */
  interrupted: Set<string>;
  /** Long-polls waiting for work. */
  waiters: Set<() => void>;
  /** Its placeholder provider key and spend, once it was given one. */
  grant?: ProxyGrant;
  /** Its setup cache's repository and branches, as the runtime registered it. */
  cacheScope?: DevBoxCacheScope;
}

/** A fresh record for a DevBox registered at `now`. */
export function createRecord(
  runId: string,
  token: string,
  files: Record<string, string>,
  now: number,
): DevBoxRecord {
  for (const name of Object.keys(files)) {
    if (!isValidFileName(name)) {
      throw new DevBoxError(
        "invalid-request",
        `file name "${name}" is not a lower-case identifier`,
      );
    }
  }
  return {
    runId,
    token: Buffer.from(token, "utf8"),
    files,
    registeredAt: now,
    lastSeenAt: undefined,
    running: undefined,
    state: "active",
    readyReported: false,
    pending: [],
    dispatched: new Set(),
    delivered: new Set(),
    finished: new Set(),
    interrupted: new Set(),
    waiters: new Set(),
  };
}

/** Ends every long-poll of the DevBox so it answers with what there is now. */
export function wake(record: DevBoxRecord): void {
  for (const waiter of [...record.waiters]) waiter();
}

/**
 * The command whose outcome a loss makes unknown: the one the agent last said it was running,
 * else the first one it received without reporting a result.
 */
export function unknownOutcomeOf(record: DevBoxRecord): string | undefined {
  if (record.running !== undefined && !record.finished.has(record.running)) return record.running;
  return record.pending.find((request) => record.delivered.has(request.commandId))?.commandId;
}

/** Holds a long-poll until work arrives, the DevBox stops, the client leaves or time is up. */
export function waitForWork(
  record: DevBoxRecord,
  seconds: number,
  response: ServerResponse,
): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      record.waiters.delete(done);
      response.off("close", done);
      resolve();
    };
    const timer = setTimeout(done, Math.min(seconds, MAX_WAIT_SECONDS) * 1000);
    record.waiters.add(done);
    response.on("close", done);
  });
}

/**
 * Marks command `commandId` for stopping: one the agent has not received yet is taken back, a
 * running one is named in the answer to the agent's next heartbeat. Safe for unknown ids.
 */
export function interruptCommand(record: DevBoxRecord, commandId: string): void {
  if (record.state !== "active" || record.finished.has(commandId)) return;
  if (!record.delivered.has(commandId)) {
    record.pending = record.pending.filter((pending) => pending.commandId !== commandId);
  }
  record.interrupted.add(commandId);
}

/** The answer to a heartbeat: stop, interrupt the running command, or go on. */
export function heartbeatAnswer(record: DevBoxRecord): HeartbeatResponse {
  if (record.state !== "active") return { stop: true };
  const running = record.running;
  return running !== undefined && record.interrupted.has(running)
    ? { ok: true, interrupt: running }
    : { ok: true };
}
