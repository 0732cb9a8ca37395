import { randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { estimateCostUsd } from "../../agents/prices.js";
import type { TokenUsage } from "../../engine/commands.js";
import { readBoundedBody } from "./http-json.js";

/**
 * A model provider whose API the hub forwards DevBox requests to, holding its real key: the
 * DevBox gets a placeholder key and the hub's URL in the variables its CLI reads, so an agent
 * that is told to print or send its key has nothing worth taking.
 */
export interface ProviderUpstream {
  /** The name in the proxy's path: `/internal/devboxes/<id>/providers/<name>`. */
  name: string;
  /** The variable that holds the key, in the runtime and (as a placeholder) in the DevBox. */
  keyEnv: string;
  /** The variable the provider's CLIs read their base URL from. */
  baseUrlEnv: string;
  key: string;
  /** Where requests go: the runtime's own base URL variable, else the provider's API. */
  baseUrl: string;
  /** How the provider takes its key. */
  auth: "x-api-key" | "bearer";
}

/** The providers the hub can stand in for, by the variables their CLIs read. */
const PROVIDERS = [
  {
    name: "anthropic",
    keyEnv: "ANTHROPIC_API_KEY",
    baseUrlEnv: "ANTHROPIC_BASE_URL",
    defaultBaseUrl: "https://api.anthropic.com",
    auth: "x-api-key",
  },
  {
    name: "openai",
    keyEnv: "OPENAI_API_KEY",
    baseUrlEnv: "OPENAI_BASE_URL",
    defaultBaseUrl: "https://api.openai.com/v1",
    auth: "bearer",
  },
] as const;

/**
 * The providers whose key `env` holds: the hub forwards to each. `CLUSTERCODE_PROVIDER_PROXY=off`
 * turns the proxy off, and DevBoxes get the keys they list in `devbox.secrets` themselves.
 */
export function providerUpstreams(env: NodeJS.ProcessEnv): ProviderUpstream[] {
  if (env.CLUSTERCODE_PROVIDER_PROXY === "off") return [];
  return PROVIDERS.flatMap(({ defaultBaseUrl, ...provider }) => {
    const key = env[provider.keyEnv] ?? "";
    if (key === "") return [];
    const baseUrl = (env[provider.baseUrlEnv] ?? "") || defaultBaseUrl;
    return [{ ...provider, key, baseUrl: baseUrl.replace(/\/+$/, "") }];
  });
}

/** A DevBox's side of the proxy: its placeholder key and what its current command may spend. */
export interface ProxyGrant {
  key: Buffer;
  /** Room left in the run's budget when the current agent command was dispatched. */
  limitUsd: number | undefined;
  /** What proxied replies cost since then. */
  spentUsd: number;
}

/** A new grant with a random placeholder key. */
export function newGrant(): ProxyGrant {
  return {
    key: Buffer.from(`clustercode-${randomBytes(24).toString("hex")}`),
    limitUsd: undefined,
    spentUsd: 0,
  };
}

/** Whether `provided` is the grant's placeholder key, compared in constant time. */
export function grantMatches(grant: ProxyGrant, provided: string): boolean {
  const bytes = Buffer.from(provided, "utf8");
  return bytes.length === grant.key.length && timingSafeEqual(bytes, grant.key);
}

/**
 * The environment a DevBox gets in place of the keys of `upstreams` it lists in `secrets`: each
 * provider's key variable holds the placeholder and its base URL variable the hub's proxy.
 */
export function placeholderEnv(
  upstreams: readonly ProviderUpstream[],
  secrets: readonly string[],
  proxyBase: string,
  grant: ProxyGrant,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const upstream of upstreams) {
    if (!secrets.includes(upstream.keyEnv)) continue;
    env[upstream.keyEnv] = grant.key.toString("utf8");
    env[upstream.baseUrlEnv] = `${proxyBase}/${upstream.name}`;
  }
  return env;
}

/** The largest request body forwarded (a long agent conversation with files attached). */
const MAX_REQUEST_BYTES = 32 * 1024 * 1024;
/** The most of a non-streamed reply kept to read its usage. */
const MAX_METERED_BYTES = 8 * 1024 * 1024;

/** Request headers never forwarded: the placeholder key, and what the connection owns. */
const DROPPED_REQUEST_HEADERS = new Set([
  "authorization",
  "x-api-key",
  "host",
  "connection",
  "content-length",
  "accept-encoding",
  "transfer-encoding",
  "keep-alive",
  "proxy-authorization",
  "upgrade",
]);
/** Reply headers not passed back: fetch has already decoded and de-chunked the body. */
const DROPPED_REPLY_HEADERS = new Set([
  "content-encoding",
  "content-length",
  "transfer-encoding",
  "connection",
  "keep-alive",
]);

/** What a proxied request is checked against before it is forwarded. */
export interface ProxyTarget {
  upstream: ProviderUpstream;
  grant: ProxyGrant;
  /** The path after `/providers/<name>`, with its query. */
  rest: string;
}

/**
 * Forwards one DevBox request to its provider with the real key, refusing it when the command's
 * share of the run budget is spent, and counts what the reply cost from the usage the provider
 * reports (streamed or not). Refusals are in the provider's own error shape, 403, which the
 * CLIs do not retry.
 */
export async function forwardToProvider(
  request: IncomingMessage,
  response: ServerResponse,
  target: ProxyTarget,
): Promise<void> {
  const { upstream, grant } = target;
  if (grant.limitUsd !== undefined && grant.spentUsd >= grant.limitUsd) {
    return refuse(
      response,
      403,
      upstream,
      `clustercode: the run's budget is spent ($${grant.spentUsd.toFixed(4)} of $${grant.limitUsd.toFixed(4)} left when this command started)`,
    );
  }
  const url = upstreamUrl(upstream, target.rest);
  if (url === undefined)
    return refuse(response, 404, upstream, "clustercode: no such provider path");
  const body = await readBoundedBody(request, MAX_REQUEST_BYTES);
  if (body === undefined) {
    return refuse(
      response,
      413,
      upstream,
      `clustercode: request body over ${MAX_REQUEST_BYTES} bytes`,
    );
  }
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || DROPPED_REQUEST_HEADERS.has(name)) continue;
    headers.set(name, Array.isArray(value) ? value.join(", ") : value);
  }
  headers.set("accept-encoding", "identity");
  if (upstream.auth === "bearer") headers.set("authorization", `Bearer ${upstream.key}`);
  else headers.set("x-api-key", upstream.key);
  let reply: Response;
  try {
    reply = await fetch(url, {
      method: request.method ?? "GET",
      headers,
      ...(body.length === 0 ? {} : { body }),
      redirect: "manual",
    });
  } catch {
    return refuse(response, 502, upstream, `clustercode: ${upstream.name} could not be reached`);
  }
  const replyHeaders: Record<string, string> = {};
  reply.headers.forEach((value, name) => {
    if (!DROPPED_REPLY_HEADERS.has(name)) replyHeaders[name] = value;
  });
  response.writeHead(reply.status, replyHeaders);
  const meter = new UsageMeter(modelOf(body));
  if (reply.body !== null) {
    for await (const chunk of reply.body as AsyncIterable<Uint8Array>) {
      // The agent went away: stop reading (which cancels the provider's reply too).
      if (response.destroyed) break;
      meter.feed(chunk);
      if (!response.write(chunk)) await drained(response);
    }
  }
  response.end();
  grant.spentUsd += meter.costUsd();
}

/** The upstream URL of `rest`, or undefined when it would leave the provider's base. */
function upstreamUrl(upstream: ProviderUpstream, rest: string): URL | undefined {
  const base = new URL(`${upstream.baseUrl}/`);
  const url = new URL(rest.replace(/^\/+/, ""), base);
  return url.origin === base.origin && url.pathname.startsWith(base.pathname) ? url : undefined;
}

function drained(response: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      response.off("drain", done);
      response.off("close", done);
      resolve();
    };
    response.once("drain", done);
    response.once("close", done);
  });
}

/** An error answered in the shape the provider's SDKs parse, so the CLI shows the reason. */
function refuse(
  response: ServerResponse,
  status: number,
  upstream: ProviderUpstream | undefined,
  message: string,
): void {
  const type =
    status === 403 ? "permission_error" : status === 401 ? "authentication_error" : "api_error";
  const body =
    upstream?.auth === "x-api-key"
      ? { type: "error", error: { type, message } }
      : { error: { type, code: type, message } };
  const text = JSON.stringify(body);
  response.writeHead(status, {
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(text)),
  });
  response.end(text);
}

/** Answers a request whose key or DevBox the hub does not know. */
export function refuseUnauthorized(response: ServerResponse): void {
  refuse(response, 401, undefined, "clustercode: unknown DevBox or key");
}

/** Answers a request for a provider the hub holds no key for. */
export function refuseUnknownProvider(response: ServerResponse, name: string): void {
  refuse(response, 404, undefined, `clustercode: the runtime holds no key for provider "${name}"`);
}

function modelOf(body: Buffer): string | undefined {
  if (body.length === 0) return undefined;
  try {
    const model = (JSON.parse(body.toString("utf8")) as { model?: unknown }).model;
    return typeof model === "string" ? model : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Reads token usage from a provider reply as it passes: Server-Sent Events line by line
 * (Anthropic's `message_start` and `message_delta`, OpenAI's `response.completed`), or a JSON
 * body's `usage`. Counts the largest figure seen, as streamed counts are running totals.
 */
class UsageMeter {
  readonly #decoder = new TextDecoder();
  #text = "";
  #model: string | undefined;
  readonly #usage: Required<TokenUsage> = { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0 };

  constructor(model: string | undefined) {
    this.#model = model;
  }

  feed(chunk: Uint8Array): void {
    this.#text += this.#decoder.decode(chunk, { stream: true });
    let newline = this.#text.indexOf("\n");
    while (newline >= 0) {
      const line = this.#text.slice(0, newline);
      this.#text = this.#text.slice(newline + 1);
      if (line.startsWith("data:")) this.#read(line.slice(5));
      newline = this.#text.indexOf("\n");
    }
    if (this.#text.length > MAX_METERED_BYTES) this.#text = "";
  }

  costUsd(): number {
    if (this.#text.trim().startsWith("{")) this.#read(this.#text);
    if (this.#model === undefined) return 0;
    return estimateCostUsd(this.#model, this.#usage) ?? 0;
  }

  #read(json: string): void {
    let value: unknown;
    try {
      value = JSON.parse(json);
    } catch {
      return;
    }
    for (const holder of usageHolders(value)) {
      if (typeof holder.model === "string") this.#model = holder.model;
      const usage = holder.usage;
      if (typeof usage !== "object" || usage === null) continue;
      const counts = tokenCounts(usage as Record<string, unknown>);
      this.#usage.inputTokens = Math.max(this.#usage.inputTokens, counts.inputTokens);
      this.#usage.outputTokens = Math.max(this.#usage.outputTokens, counts.outputTokens);
      this.#usage.cachedInputTokens = Math.max(
        this.#usage.cachedInputTokens,
        counts.cachedInputTokens,
      );
    }
  }
}

/** The objects of an event or body that may carry `usage` (and `model`). */
function usageHolders(value: unknown): Record<string, unknown>[] {
  if (typeof value !== "object" || value === null) return [];
  const record = value as Record<string, unknown>;
  return [record, record.message, record.response].filter(
    (holder): holder is Record<string, unknown> => typeof holder === "object" && holder !== null,
  );
}

const count = (value: unknown): number => (typeof value === "number" && value > 0 ? value : 0);

/** Anthropic's, the Responses API's and Chat Completions' usage as one set of counts. */
function tokenCounts(usage: Record<string, unknown>): Required<TokenUsage> {
  const details = (usage.input_tokens_details ?? usage.prompt_tokens_details) as
    Record<string, unknown> | undefined;
  const anthropicCached = count(usage.cache_read_input_tokens);
  const anthropicInput =
    count(usage.input_tokens) + anthropicCached + count(usage.cache_creation_input_tokens);
  const isAnthropic = "cache_read_input_tokens" in usage || "cache_creation_input_tokens" in usage;
  return {
    inputTokens: isAnthropic
      ? anthropicInput
      : count(usage.input_tokens) || count(usage.prompt_tokens),
    outputTokens: count(usage.output_tokens) || count(usage.completion_tokens),
    cachedInputTokens: isAnthropic ? anthropicCached : count(details?.cached_tokens),
  };
}
