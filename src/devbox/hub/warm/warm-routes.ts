import type { IncomingMessage, ServerResponse } from "node:http";
import { describeIssues, MAX_WAIT_SECONDS } from "../../protocol.js";
import { warmReadySchema, type ClaimPollResponse } from "../../warm-protocol.js";
import type { WarmDesk } from "./warm-desk.js";
import type { WarmGit } from "./warm-git.js";

/** `/internal/warm/<warmId>/<route><rest>`. */
const WARM_PATH = /^\/internal\/warm\/([^/?]+)\/(ready|claim|git)(\/[^]*|\?[^]*)?$/;

/** The largest `POST ready` body read. */
const MAX_READY_BYTES = 4096;

/** Whether the hub serves `url` with {@link serveWarm}. */
export function isWarmRoute(url: string): boolean {
  return url === "/internal/warm" || url.startsWith("/internal/warm/");
}

/**
 * Serves a warm task's request (see warm-protocol.ts): read-only git of its repository's
 * default branch, `ready`, and the claim long-poll, each with its warm token; 401 for anything
 * else, a wrong token, or an identity that was claimed or revoked.
 */
export async function serveWarm(
  request: IncomingMessage,
  response: ServerResponse,
  desk: WarmDesk,
  git: WarmGit | undefined,
): Promise<void> {
  const url = request.url ?? "";
  if (url === "/internal/warm" && request.method === "GET") {
    response.writeHead(204).end();
    return;
  }
  const match = WARM_PATH.exec(url);
  let warmId = "";
  try {
    warmId = decodeURIComponent(match?.[1] ?? "");
  } catch {
    // An id that does not decode names no identity: answered 401 below.
  }
  const record = desk.authenticate(warmId, request.headers.authorization);
  if (match === null || record === undefined) return json(response, 401, { error: "unauthorized" });
  const [, , route, rest = ""] = match;
  if (route === "git") {
    if (git === undefined) return json(response, 404, { error: "this hub serves no git" });
    return git.handle(request, response, record, rest);
  }
  if (route === "ready" && request.method === "POST") {
    const body = await readJson(request);
    const parsed = warmReadySchema.safeParse(body);
    if (!parsed.success) return json(response, 400, { error: describeIssues(parsed.error) });
    desk.markReady(record, parsed.data);
    return json(response, 200, { ok: true });
  }
  if (route === "claim" && request.method === "GET" && record.state === "ready") {
    const asked = Number(new URL(url, "http://hub").searchParams.get("wait") ?? "0");
    const wait = Number.isFinite(asked) ? Math.max(0, Math.min(asked, MAX_WAIT_SECONDS)) : 0;
    const closed = new AbortController();
    response.once("close", () => closed.abort());
    const claim = await desk.waitForClaim(warmId, record, wait * 1000, closed.signal);
    const answer: ClaimPollResponse = claim === undefined ? { wait: true } : { claim };
    return json(response, 200, answer);
  }
  // A claim before `ready` is refused: the executor offers only to ready tasks.
  return json(response, route === "claim" ? 409 : 405, { error: `${request.method} ${route}` });
}

async function readJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_READY_BYTES) return undefined;
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown;
  } catch {
    return undefined;
  }
}

function json(response: ServerResponse, status: number, value: unknown): void {
  const body = Buffer.from(JSON.stringify(value));
  response.writeHead(status, {
    "content-type": "application/json",
    "content-length": String(body.length),
    "cache-control": "no-store",
  });
  response.end(body);
}
