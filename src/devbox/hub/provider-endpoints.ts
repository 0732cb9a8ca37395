import { priceOf, type ModelPrice } from "../../workflow/model-prices.js";
import { requestBounds } from "./request-bounds.js";

/** The metered endpoint a DevBox request is for: the only ones the proxy forwards. */
export interface MeteredEndpoint {
  /** The path under the provider's base, e.g. `/v1/messages`. */
  path: string;
  /** Whether the provider bills it (Anthropic's token counting is free). */
  billed: boolean;
  /** The body field that caps the reply's tokens, which the proxy sets when it is absent. */
  maxTokensField: "max_tokens" | "max_output_tokens" | "max_completion_tokens" | undefined;
}

/**
 * The endpoints each provider's agent CLIs need, by the path after the provider's base URL
 * (Anthropic's base has no `/v1`, OpenAI's has). Everything else (batches, files, models,
 * organisations, fine-tuning…) is refused and never sent with the key.
 */
const METERED: Readonly<Record<string, readonly MeteredEndpoint[]>> = {
  anthropic: [
    { path: "/v1/messages", billed: true, maxTokensField: "max_tokens" },
    { path: "/v1/messages/count_tokens", billed: false, maxTokensField: undefined },
  ],
  openai: [
    { path: "/responses", billed: true, maxTokensField: "max_output_tokens" },
    { path: "/chat/completions", billed: true, maxTokensField: "max_completion_tokens" },
  ],
};

/** The metered endpoint of a `method` request to `rest` (path and query), or undefined. */
export function meteredEndpoint(
  provider: string,
  method: string | undefined,
  rest: string,
): MeteredEndpoint | undefined {
  if (method !== "POST") return undefined;
  const path = rest.split("?")[0]?.replace(/\/+$/, "") ?? "";
  return METERED[provider]?.find((endpoint) => endpoint.path === path);
}

/**
 * Output tokens a request that names no cap gets when a budget applies: the proxy writes this
 * cap into the request, so the reservation bounds what the reply can cost.
 */
export const DEFAULT_MAX_OUTPUT_TOKENS = 32_000;

/** Input tokens estimated from a request body's size (JSON is at least ~3 bytes a token). */
const BYTES_PER_INPUT_TOKEN = 3;

/** A request body the proxy understood: its model and the most its reply may cost. */
export interface MeteredRequest {
  model: string;
  /** What the request can cost at most (input estimated from its size, output at its cap). */
  reserveUsd: number;
  /** The body to forward: the original, or with the proxy's output cap (and usage) added. */
  body: Buffer;
}

/** Why a request body is refused before it reaches the provider: the status and the reason. */
export interface MeteredRequestRefusal {
  refused: { status: number; message: string };
}

const refusal = (status: number, message: string): MeteredRequestRefusal => ({
  refused: { status, message },
});

/**
 * Reads a billed request's model and token cap and prices its worst case. When `budgeted`, an
 * unpriced model is refused, and so is an input whose size the body does not show (see
 * `requestBounds`); a request without a cap gets {@link DEFAULT_MAX_OUTPUT_TOKENS}. A streamed
 * Chat Completions request is asked to include its usage, which the proxy settles on.
 */
export function meterRequest(
  provider: string,
  endpoint: MeteredEndpoint,
  raw: Buffer,
  budgeted: boolean,
): MeteredRequest | MeteredRequestRefusal {
  const parsed = parseBody(raw);
  if ("refused" in parsed) return parsed;
  const { body } = parsed;
  const model = body.model;
  if (typeof model !== "string" || model === "") {
    return refusal(400, "clustercode: the request names no model");
  }
  const price = priceOf(model);
  if (!endpoint.billed) return { model, reserveUsd: 0, body: raw };
  if (price === undefined) {
    if (!budgeted) return { model, reserveUsd: 0, body: raw };
    return refusal(
      403,
      `clustercode: model "${model}" has no price, so a run with a cost budget cannot use it (the price list has exact model ids only)`,
    );
  }
  const choices = body.n === undefined ? 1 : tokenCap(body.n);
  if (choices === undefined) return refusal(400, "clustercode: n must be a positive integer");
  const bounds = budgeted ? requestBounds(provider, body) : { extraInputTokens: 0 };
  if (bounds.unbounded !== undefined) {
    return refusal(
      403,
      `clustercode: under a cost budget the proxy cannot bound what ${bounds.unbounded} bills, so it is refused`,
    );
  }
  const { cap, forwarded } = capped(endpoint, body, raw, budgeted);
  const inputTokens = Math.ceil(forwarded.length / BYTES_PER_INPUT_TOKEN) + bounds.extraInputTokens;
  const rates = worstRates(price);
  const reserveUsd =
    (inputTokens * rates.input + choices * (cap ?? DEFAULT_MAX_OUTPUT_TOKENS) * rates.output) /
    1_000_000;
  return { model, reserveUsd, body: forwarded };
}

function parseBody(raw: Buffer): { body: Record<string, unknown> } | MeteredRequestRefusal {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString("utf8"));
  } catch {
    return refusal(400, "clustercode: the request body is not JSON");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return refusal(400, "clustercode: the request body is not a JSON object");
  }
  return { body: parsed as Record<string, unknown> };
}

/** The body as forwarded: with the proxy's output cap when budgeted, and streamed usage asked. */
function capped(
  endpoint: MeteredEndpoint,
  body: Record<string, unknown>,
  raw: Buffer,
  budgeted: boolean,
): { cap: number | undefined; forwarded: Buffer } {
  let changed = false;
  const field = endpoint.maxTokensField;
  let cap = field === undefined ? undefined : tokenCap(body[field] ?? body.max_tokens);
  if (cap === undefined && budgeted && field !== undefined) {
    cap = DEFAULT_MAX_OUTPUT_TOKENS;
    body[field] = cap;
    changed = true;
  }
  if (endpoint.path === "/chat/completions" && body.stream === true) {
    const options = typeof body.stream_options === "object" ? body.stream_options : {};
    body.stream_options = { ...options, include_usage: true };
    changed = true;
  }
  return { cap, forwarded: changed ? Buffer.from(JSON.stringify(body), "utf8") : raw };
}

function tokenCap(value: unknown): number | undefined {
  return typeof value === "number" && Number.isInteger(value) && value > 0 ? value : undefined;
}

/**
 * The dearest rate an input and an output token of `price` can bill: the long-prompt tier when
 * there is one, and an input token at the cache-write rate (Anthropic's hour-long writes cost
 * twice the input rate).
 */
function worstRates(price: ModelPrice): { input: number; output: number } {
  const tiers = price.longPrompt === undefined ? [price] : [price, price.longPrompt];
  return {
    input: Math.max(...tiers.map((tier) => Math.max(tier.input, tier.cacheWrite1h ?? 0))),
    output: Math.max(...tiers.map((tier) => tier.output)),
  };
}
