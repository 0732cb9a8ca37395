import type { HttpBindings } from "@hono/node-server";
import { Hono, type Context, type MiddlewareHandler } from "hono";
import type { CommandResult } from "../../engine/commands.js";
import type { DevBoxEvent } from "./events.js";
import { jsonResponse, readJsonBody } from "./http-json.js";
import { heartbeatAnswer, waitForWork, type DevBoxRecord } from "./record.js";
import {
  commandResultSchema,
  describeIssues,
  heartbeatBodySchema,
  MAX_BODY_BYTES,
  readyBodySchema,
} from "../protocol.js";

/** What the hub's routes need from the hub. */
export interface HubRoutesOptions {
  /** The record whose token `authorization` carries, or undefined (answer 401). */
  authenticate: (devboxId: string, authorization: string | undefined) => DevBoxRecord | undefined;
  /** Receives every event; an exception thrown here answers the agent 500, so it retries. */
  onEvent: (event: DevBoxEvent) => void;
  /** The result as reported: with the DevBox's proxied spend not reported yet added. */
  withProxiedCost: (devboxId: string, record: DevBoxRecord, result: CommandResult) => CommandResult;
  /** Told of a request that failed with an exception (answered 500). */
  onError: (error: unknown) => void;
  now: () => number;
}

/** The per-DevBox routes and the one method each takes. */
const METHODS = {
  ready: "POST",
  commands: "GET",
  results: "POST",
  heartbeat: "POST",
} as const;

type Env = { Bindings: HttpBindings; Variables: { devboxId: string; record: DevBoxRecord } };

const ROUTE = "/internal/devboxes/:devboxId/:route{ready|commands|results|heartbeat}";
const BASE = "/internal/devboxes/:devboxId";

/**
 * The internal DevBox API on a Hono app: every route authenticates the DevBox's bearer token
 * first (401 and nothing else), then checks the method (405), then marks the DevBox seen.
 */
export function hubRoutes(options: HubRoutesOptions): Hono<Env> {
  const app = new Hono<Env>();
  app.notFound(() => jsonResponse(404, { error: "not found" }));
  app.onError((error) => {
    options.onError(error);
    return jsonResponse(500, { error: "internal error" });
  });
  app.use(ROUTE, guardDevBoxRoutes(options));
  app.get(`${BASE}/commands`, (c) => poll(c));
  app.post(`${BASE}/ready`, (c) =>
    withBody(c, (body, record, devboxId) => {
      const ready = readyBodySchema.safeParse(body);
      if (!ready.success) return badRequest(describeIssues(ready.error));
      if (isLive(record) && !record.readyReported) {
        options.onEvent({ type: "devbox.ready", devboxId, ...ready.data });
        record.readyReported = true;
        if (!ready.data.ok) record.state = "failed";
      }
      return jsonResponse(200, { ok: true });
    }),
  );
  app.post(`${BASE}/results`, (c) =>
    withBody(c, (body, record, devboxId) => recordResult(options, body, record, devboxId)),
  );
  app.post(`${BASE}/heartbeat`, (c) =>
    withBody(c, (body, record) => {
      const heartbeat = heartbeatBodySchema.safeParse(body);
      if (!heartbeat.success) return badRequest(describeIssues(heartbeat.error));
      record.running = heartbeat.data.running;
      return jsonResponse(200, heartbeatAnswer(record));
    }),
  );
  return app;
}

/**
 * Every DevBox route's first step: authenticates the bearer token (401), checks the method
 * (405), marks the DevBox seen and hands the id and record on to the route.
 */
function guardDevBoxRoutes(options: HubRoutesOptions): MiddlewareHandler<Env, typeof ROUTE> {
  return async (c, next) => {
    // Decoded here, not by the router, so that a malformed id is an unknown route.
    const devboxId = safeDecode(new URL(c.req.url).pathname.split("/")[3] ?? "");
    if (devboxId === undefined) return jsonResponse(404, { error: "not found" });
    const record = options.authenticate(devboxId, c.req.header("authorization"));
    if (record === undefined) {
      return jsonResponse(401, { error: "unauthorized" }, { "www-authenticate": "Bearer" });
    }
    const method = METHODS[c.req.param("route") as keyof typeof METHODS];
    if (c.req.method !== method) {
      return jsonResponse(405, { error: `use ${method}` }, { allow: method });
    }
    if (record.state === "active") record.lastSeenAt = options.now();
    c.set("devboxId", devboxId);
    c.set("record", record);
    await next();
  };
}

/** `POST results`: reports a dispatched command's result once, and clears it from the queue. */
function recordResult(
  options: HubRoutesOptions,
  body: unknown,
  record: DevBoxRecord,
  devboxId: string,
): Response {
  const result = commandResultSchema.safeParse(body);
  if (!result.success) return badRequest(describeIssues(result.error));
  const { commandId } = result.data;
  if (!record.dispatched.has(commandId)) {
    return jsonResponse(409, { error: `command ${commandId} was never dispatched` });
  }
  if (isLive(record) && !record.finished.has(commandId)) {
    const reported = options.withProxiedCost(devboxId, record, result.data);
    options.onEvent({ type: "command.finished", devboxId, result: reported });
  }
  record.finished.add(commandId);
  record.pending = record.pending.filter((pending) => pending.commandId !== commandId);
  if (record.running === commandId) record.running = undefined;
  return jsonResponse(200, { ok: true });
}

/** `GET commands?wait=S`: answers at once when there is work or a stop, else holds the poll. */
async function poll(c: Context<Env>): Promise<Response> {
  const record = c.var.record;
  const waitText = new URL(c.req.url).searchParams.get("wait") ?? "0";
  const wait = Number(waitText);
  if (waitText.trim() === "" || !Number.isFinite(wait) || wait < 0) {
    return badRequest(`wait must be a number of seconds, got "${waitText}"`);
  }
  if (record.state === "active" && record.pending.length === 0 && wait > 0) {
    await waitForWork(record, wait, c.env.outgoing);
  }
  if (record.state !== "active") return jsonResponse(200, { stop: true });
  // A poll whose client left delivers nothing: its commands are redelivered to the next.
  if (c.env.outgoing.destroyed) return jsonResponse(200, { commands: [] });
  for (const pending of record.pending) record.delivered.add(pending.commandId);
  return jsonResponse(200, { commands: record.pending });
}

/** Reads the JSON body (400 or 413 when it is not), then answers with `handle`. */
async function withBody(
  c: Context<Env>,
  handle: (body: unknown, record: DevBoxRecord, devboxId: string) => Response,
): Promise<Response> {
  const body = await readJsonBody(c.env.incoming, MAX_BODY_BYTES);
  if (!body.ok) return jsonResponse(body.status, { error: body.message }, { connection: "close" });
  return handle(body.value, c.var.record, c.var.devboxId);
}

/** Whether the hub still reports what the DevBox says (not once it is released or lost). */
function isLive(record: DevBoxRecord): boolean {
  return record.state === "active" || record.state === "failed";
}

function badRequest(message: string): Response {
  return jsonResponse(400, { error: message });
}

function safeDecode(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch (error) {
    if (error instanceof URIError) return undefined;
    throw error;
  }
}
