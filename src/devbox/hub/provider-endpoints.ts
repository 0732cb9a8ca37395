import { PRICES_PER_MTOK } from "../../workflow/model-prices.js";

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
 * unpriced model is refused and a request without a cap gets {@link DEFAULT_MAX_OUTPUT_TOKENS};
 * a streamed Chat Completions request is asked to include its usage, which the proxy settles on.
 */
export function meterRequest(
  endpoint: MeteredEndpoint,
  raw: Buffer,
  budgeted: boolean,
): MeteredRequest | MeteredRequestRefusal {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString("utf8"));
  } catch {
    return refusal(400, "clustercode: the request body is not JSON");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return refusal(400, "clustercode: the request body is not a JSON object");
  }
  const body = parsed as Record<string, unknown>;
  const model = body.model;
  if (typeof model !== "string" || model === "") {
    return refusal(400, "clustercode: the request names no model");
  }
  const price = priceOf(model);
  if (!endpoint.billed) return { model, reserveUsd: 0, body: raw };
  if (price === undefined) {
    if (budgeted) {
      return refusal(
        403,
        `clustercode: model "${model}" has no price, so a run with a cost budget cannot use it`,
      );
    }
    return { model, reserveUsd: 0, body: raw };
  }
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
  const forwarded = changed ? Buffer.from(JSON.stringify(body), "utf8") : raw;
  const inputTokens = Math.ceil(forwarded.length / BYTES_PER_INPUT_TOKEN);
  const reserveUsd =
    (inputTokens * price.input + (cap ?? DEFAULT_MAX_OUTPUT_TOKENS) * price.output) / 1_000_000;
  return { model, reserveUsd, body: forwarded };
}

function tokenCap(value: unknown): number | undefined {
  return typeof value === "number" && Number.isInteger(value) && value > 0 ? value : undefined;
}

/** The list price of `model` (the longest matching prefix), or undefined. */
function priceOf(model: string): { input: number; output: number } | undefined {
  const prefix = Object.keys(PRICES_PER_MTOK)
    .filter((candidate) => model.startsWith(candidate))
    .sort((a, b) => b.length - a.length)[0];
  return prefix === undefined ? undefined : PRICES_PER_MTOK[prefix];
}
