import { createReadStream, createWriteStream } from "node:fs";
import { stat } from "node:fs/promises";
import { request as httpRequest, type IncomingMessage, type RequestOptions } from "node:http";
import { request as httpsRequest } from "node:https";
import { pipeline } from "node:stream/promises";
import { DevBoxError } from "../errors.js";
import { CACHE_MISS_HEADER, CACHE_SHA256_HEADER, cacheRoute } from "../protocol.js";

/** How the agent reaches the hub's setup cache routes. */
export interface HubCacheClientOptions {
  apiUrl: string;
  devboxId: string;
  token: string;
  signal: AbortSignal;
  /** Longest the hub may stay silent in the middle of a request (not its whole length). */
  idleTimeoutMs: number;
}

/** What `GET cache/<key>` found: the entry (written to the file) and its checksum, or none. */
export type CacheFetch =
  { found: true; sha256: string } | { found: false; offered: boolean; why?: string };

/** What `PUT cache/<key>` did with an entry. */
export type CacheStore = { saved: true } | { saved: false; offered: boolean; why: string };

/**
 * The agent's side of the setup cache routes (ECS DevBoxes, which see no cache directory): an
 * entry is fetched into a file and stored from one, streamed both ways. Only a failure to talk
 * to the hub at all throws (a {@link DevBoxError} `api-unreachable`); the cache never fails
 * setup, so callers treat that as a miss.
 */
export class HubCacheClient {
  readonly #options: HubCacheClientOptions;

  constructor(options: HubCacheClientOptions) {
    this.#options = options;
  }

  /** Fetches entry `key` into `file`; on a miss `file` may hold nothing useful. */
  async fetch(key: string, file: string): Promise<CacheFetch> {
    const response = await this.#send("GET", key, {});
    const sha256 = header(response, CACHE_SHA256_HEADER);
    if (response.statusCode === 200 && sha256 !== undefined) {
      await pipeline(response, createWriteStream(file, { mode: 0o600 }));
      return { found: true, sha256 };
    }
    const why = await drain(response);
    if (response.statusCode === 404 && header(response, CACHE_MISS_HEADER) !== undefined) {
      return { found: false, offered: true };
    }
    return { found: false, offered: response.statusCode !== 404, why };
  }

  /** Stores `file`, whose bytes hash to `sha256`, as entry `key` of the run branch. */
  async store(key: string, file: string, sha256: string): Promise<CacheStore> {
    const { size } = await stat(file);
    const body = createReadStream(file);
    const headers = { "content-length": String(size), [CACHE_SHA256_HEADER]: sha256 };
    const response = await this.#send("PUT", key, headers, body);
    const why = await drain(response);
    if (response.statusCode === 201) return { saved: true };
    return { saved: false, offered: response.statusCode !== 404, why };
  }

  /** One request; resolves to the hub's answer once its headers arrived. */
  #send(
    method: "GET" | "PUT",
    key: string,
    headers: Record<string, string>,
    body?: NodeJS.ReadableStream,
  ): Promise<IncomingMessage> {
    const { apiUrl, devboxId, token, signal, idleTimeoutMs } = this.#options;
    const url = new URL(`${apiUrl}${cacheRoute(devboxId, key)}`);
    const options: RequestOptions = {
      method,
      headers: { ...headers, authorization: `Bearer ${token}` },
      signal,
      timeout: idleTimeoutMs,
    };
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const request = send(url, options, resolve);
      const fail = (error: unknown) =>
        reject(
          new DevBoxError("api-unreachable", `${method} cache: ${String(error)}`, {
            retryable: true,
            cause: error,
          }),
        );
      request.once("error", fail);
      request.once("timeout", () => request.destroy(new Error("the hub stopped answering")));
      if (body === undefined) request.end();
      else body.once("error", (error: Error) => request.destroy(error)).pipe(request);
    });
  }
}

function header(response: IncomingMessage, name: string): string | undefined {
  const value = response.headers[name];
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** Reads what is left of an answer (a short error text), at most 4 KiB of it kept. */
async function drain(response: IncomingMessage): Promise<string> {
  let text = "";
  for await (const chunk of response) {
    if (text.length < 4096) text += (chunk as Buffer).toString("utf8");
  }
  return `${response.statusCode ?? 0} ${text.slice(0, 4096).trim()}`;
}
