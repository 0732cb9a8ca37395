import { randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Settings } from "../../settings/index.js";
import { readBoundedBody } from "./http-json.js";
import {
  meteredEndpoint,
  meterRequest,
  type MeteredEndpoint,
  type MeteredRequest,
} from "./provider-endpoints.js";
import { isRefusal, type RunSpend } from "./spend-ledger.js";
import { UsageMeter } from "./usage-meter.js";

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

/** The decoded settings the proxy is set up by (the settings' `providers` group). */
export type ProxySettings = Pick<
  Settings["providers"],
  "providerProxy" | "anthropicApiKey" | "anthropicBaseUrl" | "openaiApiKey" | "openaiBaseUrl"
>;

/**
 * The providers whose key the settings hold: the hub forwards to each. `CLUSTERCODE_PROVIDER_PROXY=off`
 * turns the proxy off, and DevBoxes get the keys they list in `devbox.secrets` themselves.
 */
export function providerUpstreams(settings: ProxySettings): ProviderUpstream[] {
  if (settings.providerProxy === "off") return [];
  const held: Record<string, { key: string | undefined; baseUrl: string | undefined }> = {
    anthropic: { key: settings.anthropicApiKey, baseUrl: settings.anthropicBaseUrl },
    openai: { key: settings.openaiApiKey, baseUrl: settings.openaiBaseUrl },
  };
  return PROVIDERS.flatMap(({ defaultBaseUrl, ...provider }) => {
    const key = held[provider.name]?.key ?? "";
    if (key === "") return [];
    const baseUrl = (held[provider.name]?.baseUrl ?? "") || defaultBaseUrl;
    return [{ ...provider, key, baseUrl: baseUrl.replace(/\/+$/, "") }];
  });
}

/** A DevBox's side of the proxy: its placeholder key and its requests in flight. */
export interface ProxyGrant {
  key: Buffer;
  /** Requests forwarded and not yet answered in full. */
  inFlight: number;
  /**
   * Why the budget refused one of the DevBox's requests outright (a model without a price, an
   * input it cannot bound) since its last command result: that command fails with the reason.
   */
  refused?: string;
}

/** A new grant with a random placeholder key. */
export function newGrant(): ProxyGrant {
  return { key: Buffer.from(`clustercode-${randomBytes(24).toString("hex")}`), inFlight: 0 };
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
  devboxId: string;
  /** The proxied spend of the DevBox's run. */
  spend: RunSpend;
  /** The most requests the DevBox may have in flight. */
  maxInFlight: number;
  /** The path after `/providers/<name>`, with its query. */
  rest: string;
}

/** The default of `CLUSTERCODE_PROVIDER_REQUESTS`: requests in flight per DevBox. */
export const DEFAULT_MAX_IN_FLIGHT = 4;

/**
 * Forwards one DevBox request to its provider with the real key. Only the metered endpoints
 * are forwarded; each request first reserves its worst case against what the run has left
 * (402 when it does not fit), and the reservation is replaced by what the reply cost, from the
 * usage the provider reports (streamed or not). Refusals are in the provider's own error shape
 * so that the CLI shows the reason.
 */
export async function forwardToProvider(
  request: IncomingMessage,
  response: ServerResponse,
  target: ProxyTarget,
): Promise<void> {
  const { upstream, grant } = target;
  const endpoint = meteredEndpoint(upstream.name, request.method, target.rest);
  const url = upstreamUrl(upstream, target.rest);
  if (endpoint === undefined || url === undefined) {
    request.resume();
    return refuse(
      response,
      403,
      upstream,
      `clustercode: the proxy forwards only model calls (${request.method ?? "?"} ${(target.rest.split("?")[0] ?? "").slice(0, 200)} is not one)`,
    );
  }
  if (grant.inFlight >= target.maxInFlight) {
    request.resume();
    return refuse(
      response,
      429,
      upstream,
      `clustercode: at most ${target.maxInFlight} provider requests at a time per DevBox`,
      { "retry-after": "1" },
    );
  }
  grant.inFlight++;
  try {
    await meteredForward(request, response, target, endpoint, url);
  } finally {
    grant.inFlight--;
  }
}

async function meteredForward(
  request: IncomingMessage,
  response: ServerResponse,
  { upstream, spend, devboxId, grant }: ProxyTarget,
  endpoint: MeteredEndpoint,
  url: URL,
): Promise<void> {
  const raw = await readBoundedBody(request, MAX_REQUEST_BYTES);
  if (raw === undefined) {
    return refuse(
      response,
      413,
      upstream,
      `clustercode: request body over ${MAX_REQUEST_BYTES} bytes`,
    );
  }
  const metered = meterRequest(upstream.name, endpoint, raw, spend.budgeted);
  if ("refused" in metered) {
    const { status, message } = metered.refused;
    if (status === 403 && spend.budgeted) grant.refused ??= message.replace(/^clustercode: /, "");
    return refuse(response, status, upstream, message);
  }
  const reservation = spend.reserve(metered.reserveUsd);
  if (isRefusal(reservation)) {
    return refuse(
      response,
      402,
      upstream,
      `clustercode: the run's budget is spent: this request may cost $${reservation.reserveUsd.toFixed(4)} and $${reservation.availableUsd.toFixed(4)} is left`,
    );
  }
  // What the provider billed is unknown if forwarding fails half-way: the reservation stands.
  let costUsd = metered.reserveUsd;
  try {
    costUsd = await exchange(request, response, upstream, url, metered);
  } finally {
    spend.settle(reservation, devboxId, costUsd);
  }
}

/**
 * Sends the request with the real key and streams the reply back; returns what the reply cost:
 * its reported usage at the model's price, or the whole reservation when a successful reply
 * reported none or did not arrive in full (what the provider billed is then unknown).
 */
async function exchange(
  request: IncomingMessage,
  response: ServerResponse,
  upstream: ProviderUpstream,
  url: URL,
  metered: MeteredRequest,
): Promise<number> {
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
    reply = await fetch(url, { method: "POST", headers, body: metered.body, redirect: "manual" });
  } catch {
    refuse(response, 502, upstream, `clustercode: ${upstream.name} could not be reached`);
    return 0;
  }
  const replyHeaders: Record<string, string> = {};
  reply.headers.forEach((value, name) => {
    if (!DROPPED_REPLY_HEADERS.has(name)) replyHeaders[name] = value;
  });
  response.writeHead(reply.status, replyHeaders);
  const meter = new UsageMeter(metered.model);
  let complete = true;
  try {
    if (reply.body !== null) {
      for await (const chunk of reply.body as AsyncIterable<Uint8Array>) {
        // The agent went away: stop reading (which cancels the provider's reply too).
        if (response.destroyed) {
          complete = false;
          break;
        }
        meter.feed(chunk);
        if (!response.write(chunk)) await drained(response);
      }
    }
  } catch {
    complete = false;
  }
  response.end();
  const reported = meter.costUsd();
  if (reply.status >= 400) return reported ?? 0;
  return complete && reported !== undefined
    ? reported
    : Math.max(reported ?? 0, metered.reserveUsd);
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

/** The error types the SDKs know, by status (Anthropic's names; OpenAI's SDK reads the status). */
const ERROR_TYPES: Readonly<Record<number, string>> = {
  400: "invalid_request_error",
  401: "authentication_error",
  402: "billing_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
};

/** An error answered in the shape the provider's SDKs parse, so the CLI shows the reason. */
function refuse(
  response: ServerResponse,
  status: number,
  upstream: ProviderUpstream | undefined,
  message: string,
  extraHeaders: Record<string, string> = {},
): void {
  const type = ERROR_TYPES[status] ?? "api_error";
  const body =
    upstream?.auth === "x-api-key"
      ? { type: "error", error: { type, message } }
      : { error: { type, code: type, message } };
  const text = JSON.stringify(body);
  response.writeHead(status, {
    ...extraHeaders,
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
