import type { IncomingMessage, ServerResponse } from "node:http";
import { pipeline } from "node:stream/promises";
import { CACHE_KEY_PATTERN } from "../../setup-cache-layout.js";
import { CACHE_MISS_HEADER, CACHE_SHA256_HEADER } from "../../protocol.js";
import type { CacheScope, SetupCacheStore } from "./cache-store.js";
import { BodyRefused, VerifiedBody } from "./verified-body.js";

/**
 * The repository and branches of a DevBox's setup cache, as the runtime registered the
 * DevBox: the only scopes it may read (`branch`, then `baseBranch`) and write (`branch`).
 */
export interface DevBoxCacheScope {
  repository: string;
  branch: string;
  baseBranch: string;
}

/** An authenticated request of a DevBox to its setup cache. */
export interface CacheRequest {
  /** What follows `/cache` in the path: `/<key>` and nothing else is served. */
  rest: string;
  /** The DevBox's scope from the hub's record; undefined: the runtime gave it none. */
  scope: DevBoxCacheScope | undefined;
  /** Whether the DevBox is still setting up (active and not reported ready). */
  settingUp: boolean;
}

/**
 * `GET` and `PUT /internal/devboxes/<id>/cache/<key>`, once the hub authenticated the DevBox:
 * a GET streams the run branch's entry, else the base branch's; a PUT streams the body, at
 * most the store's `maxEntryBytes` and matching its sha256, into the run branch's scope only.
 * The key is 40 hex digits and the path holds nothing else; the scopes are the hub's record
 * of the DevBox, never the request's; and the cache is open while the DevBox sets up only.
 */
export async function serveSetupCache(
  request: IncomingMessage,
  response: ServerResponse,
  store: SetupCacheStore | undefined,
  cache: CacheRequest,
): Promise<void> {
  const { method } = request;
  if (method !== "GET" && method !== "PUT") return answer(response, 405, "use GET or PUT");
  const key = /^\/([^/?#]*)$/.exec(cache.rest)?.[1] ?? "";
  if (!CACHE_KEY_PATTERN.test(key)) {
    return answer(response, 400, "a setup cache key is 40 hex digits, and nothing follows it");
  }
  // Without a scope or a store the route is not offered (the agent then caches nothing).
  if (store === undefined || cache.scope === undefined) {
    return answer(response, 404, "this hub keeps no setup cache for this DevBox");
  }
  if (!cache.settingUp) {
    return answer(response, 409, "the setup cache is open while the DevBox sets up only");
  }
  const { repository, branch, baseBranch } = cache.scope;
  if (method === "PUT") return putEntry(request, response, store, { repository, branch }, key);
  const scopes = [branch, ...(baseBranch === branch ? [] : [baseBranch])];
  for (const scopeBranch of scopes) {
    const entry = await store.get({ repository, branch: scopeBranch }, key);
    if (entry === undefined) continue;
    response.writeHead(200, {
      "content-type": "application/x-tar",
      "content-length": String(entry.bytes),
      [CACHE_SHA256_HEADER]: entry.sha256,
    });
    await pipeline(entry.body, response);
    return;
  }
  response.writeHead(404, { "content-type": "text/plain", [CACHE_MISS_HEADER]: "1" });
  response.end("no such entry\n");
}

/** Streams a PUT's body into `scope` when its length and checksum are what a store takes. */
async function putEntry(
  request: IncomingMessage,
  response: ServerResponse,
  store: SetupCacheStore,
  scope: CacheScope,
  key: string,
): Promise<void> {
  const length = request.headers["content-length"];
  const sha256 = request.headers[CACHE_SHA256_HEADER];
  if (length === undefined || !/^\d{1,15}$/.test(length)) {
    return answer(response, 411, "a setup cache entry needs its content-length");
  }
  const bytes = Number(length);
  // Refused before a byte is read: an oversized body never reaches the disk or the bucket.
  if (bytes > store.maxEntryBytes) {
    return answer(response, 413, `a setup cache entry is at most ${store.maxEntryBytes} bytes`);
  }
  if (typeof sha256 !== "string" || !/^[0-9a-f]{64}$/.test(sha256)) {
    return answer(response, 400, `${CACHE_SHA256_HEADER} must be the body's sha256 in hex`);
  }
  const body = new VerifiedBody(bytes, sha256);
  // The store's promise says how the body ended; no error of it may go unheard.
  body.on("error", () => {});
  request.once("close", () => {
    if (!request.complete) body.destroy(new BodyRefused("the upload was cut off"));
  });
  request.pipe(body);
  try {
    await store.put(scope, key, { body, bytes, sha256 });
  } catch (error) {
    if (!(error instanceof BodyRefused)) throw error;
    return answer(response, 400, error.message);
  }
  answer(response, 201, "saved");
}

/**
 * A short plain-text answer. One that refuses a body closes the connection: the hub reads
 * nothing more of it.
 */
function answer(response: ServerResponse, status: number, text: string): void {
  const close = status >= 400 ? { connection: "close" } : {};
  response.writeHead(status, { "content-type": "text/plain", ...close });
  response.end(`${text}\n`);
}
