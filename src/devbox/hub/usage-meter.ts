import { estimateCostUsd, type TokenUsage } from "../../workflow/model-prices.js";

/** The most of a non-streamed reply kept to read its usage. */
const MAX_METERED_BYTES = 8 * 1024 * 1024;

/**
 * Reads token usage from a provider reply as it passes: Server-Sent Events line by line
 * (Anthropic's `message_start` and `message_delta`, OpenAI's `response.completed`), or a JSON
 * body's `usage`. Counts the largest figure seen, as streamed counts are running totals.
 */
export class UsageMeter {
  readonly #decoder = new TextDecoder();
  #text = "";
  /** The model the request named, which prices the reply; the reply's own name if unpriced. */
  readonly #requested: string | undefined;
  #replied: string | undefined;
  #sawUsage = false;
  readonly #usage: Required<TokenUsage> = {
    inputTokens: 0,
    outputTokens: 0,
    cachedInputTokens: 0,
    cacheWriteTokens: 0,
    cacheWrite1hTokens: 0,
  };

  constructor(model: string | undefined) {
    this.#requested = model;
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

  /**
   * What the reply cost by the usage it reported: undefined when it reported none, 0 when its
   * model has no price.
   */
  costUsd(): number | undefined {
    if (this.#text.trim().startsWith("{")) this.#read(this.#text);
    this.#text = "";
    if (!this.#sawUsage) return undefined;
    const price = (model: string | undefined) =>
      model === undefined ? undefined : estimateCostUsd(model, this.#usage);
    return price(this.#requested) ?? price(this.#replied) ?? 0;
  }

  #read(json: string): void {
    let value: unknown;
    try {
      value = JSON.parse(json);
    } catch {
      return;
    }
    for (const holder of usageHolders(value)) {
      if (typeof holder.model === "string") this.#replied = holder.model;
      const usage = holder.usage;
      if (typeof usage !== "object" || usage === null) continue;
      this.#sawUsage = true;
      const counts = tokenCounts(usage as Record<string, unknown>);
      for (const key of Object.keys(counts) as (keyof TokenUsage)[]) {
        this.#usage[key] = Math.max(this.#usage[key], counts[key]);
      }
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
  const creation = usage.cache_creation as Record<string, unknown> | undefined;
  return {
    cacheWriteTokens: count(usage.cache_creation_input_tokens),
    cacheWrite1hTokens: count(creation?.ephemeral_1h_input_tokens),
    inputTokens: isAnthropic
      ? anthropicInput
      : count(usage.input_tokens) || count(usage.prompt_tokens),
    outputTokens: count(usage.output_tokens) || count(usage.completion_tokens),
    cachedInputTokens: isAnthropic ? anthropicCached : count(details?.cached_tokens),
  };
}
