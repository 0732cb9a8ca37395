/** Tokens an agent or a judge reported using. */
export interface TokenUsage {
  /** Every input token, cache reads and cache writes included. */
  inputTokens: number;
  outputTokens: number;
  /** Input tokens served from a prompt cache, when reported. */
  cachedInputTokens?: number;
  /** Input tokens written to a prompt cache (Anthropic), when reported. */
  cacheWriteTokens?: number;
  /** Of {@link cacheWriteTokens}, those written for an hour (billed higher than 5 minutes). */
  cacheWrite1hTokens?: number;
}

/** US dollars per million tokens of one model. */
export interface ModelPrice {
  input: number;
  output: number;
  /** Cache reads; the input rate when absent. */
  cached?: number;
  /** Cache writes kept an hour (Anthropic); 5-minute writes are 1.25 × `input`. */
  cacheWrite1h?: number;
  /** A dearer tier for prompts of more than `aboveTokens` input tokens (all tokens billed at it). */
  longPrompt?: { aboveTokens: number } & Omit<ModelPrice, "longPrompt">;
}

type Tier = Omit<ModelPrice, "longPrompt"> & Pick<ModelPrice, "longPrompt">;

const tier = (input: number, output: number, cached: number, cacheWrite1h?: number): Tier => ({
  input,
  output,
  cached,
  ...(cacheWrite1h === undefined ? {} : { cacheWrite1h }),
});

/** The same price under each of `ids`: a model's alias and its dated snapshot ids. */
const each = (ids: readonly string[], price: ModelPrice): Record<string, ModelPrice> =>
  Object.fromEntries(ids.map((id) => [id, price]));

/**
 * US dollars per million tokens, by EXACT model id: the ids the providers' APIs take and the
 * pinned agent CLIs send (aliases and dated snapshots both listed; `test/e2e/model-ids.test.ts`
 * checks every id the pinned Claude Code and Codex send for the documented models). There is
 * no prefix matching: `o3-pro` is not `o3`, and an id not listed here has no price. The
 * Anthropic rates are the ones the pinned Claude Code bills itself by; the OpenAI ones are the
 * public list prices. An ESTIMATE: batch discounts and priority tiers are ignored, and a
 * gateway may bill differently.
 */
export const PRICES_PER_MTOK: Readonly<Record<string, ModelPrice>> = {
  ...each(
    ["claude-3-5-haiku", "claude-3-5-haiku-20241022", "claude-3-5-haiku-latest"],
    tier(0.8, 4, 0.08, 1.6),
  ),
  ...each(["claude-haiku-4-5", "claude-haiku-4-5-20251001"], tier(1, 5, 0.1, 2)),
  "claude-haiku-5-5": {
    ...tier(0.1, 0.5, 0.01, 0.2),
    longPrompt: { aboveTokens: 100_000, ...tier(0.5, 2.5, 0.05, 1) },
  },
  ...each(
    [
      "claude-3-5-sonnet",
      "claude-3-5-sonnet-20241022",
      "claude-3-7-sonnet",
      "claude-3-7-sonnet-20250219",
      "claude-3-7-sonnet-latest",
      "claude-sonnet-4-0",
      "claude-sonnet-4-20250514",
      "claude-sonnet-4-5",
      "claude-sonnet-4-5-20250929",
      "claude-sonnet-4-6",
    ],
    tier(3, 15, 0.3, 6),
  ),
  "claude-sonnet-5": tier(2, 10, 0.2, 4),
  "claude-sonnet-5-5": tier(2, 10, 0.1, 4),
  ...each(
    ["claude-opus-4-0", "claude-opus-4-20250514", "claude-opus-4-1", "claude-opus-4-1-20250805"],
    tier(15, 75, 1.5, 30),
  ),
  ...each(
    [
      "claude-opus-4-5",
      "claude-opus-4-5-20251101",
      "claude-opus-4-6",
      "claude-opus-4-7",
      "claude-opus-4-8",
      "claude-opus-5",
    ],
    tier(5, 25, 0.5, 10),
  ),
  "claude-opus-5-5": tier(4, 20, 0.2, 8),
  ...each(["claude-fable-5", "claude-mythos-5"], tier(10, 50, 1, 20)),
  ...each(["claude-fable-5-1", "claude-mythos-5-1"], tier(10, 50, 0.25, 20)),
  ...each(["claude-fable-5-2", "claude-mythos-5-2"], tier(8, 40, 0.2, 16)),
  ...each(
    ["gpt-5", "gpt-5-2025-08-07", "gpt-5-codex", "gpt-5.1", "gpt-5.1-2025-11-13", "gpt-5.1-codex"],
    tier(1.25, 10, 0.125),
  ),
  ...each(["gpt-5-mini", "gpt-5-mini-2025-08-07", "gpt-5.1-codex-mini"], tier(0.25, 2, 0.025)),
  ...each(["gpt-5-nano", "gpt-5-nano-2025-08-07"], tier(0.05, 0.4, 0.005)),
  ...each(["gpt-4.1", "gpt-4.1-2025-04-14"], tier(2, 8, 0.5)),
  ...each(["gpt-4.1-mini", "gpt-4.1-mini-2025-04-14"], tier(0.4, 1.6, 0.1)),
  ...each(["gpt-4.1-nano", "gpt-4.1-nano-2025-04-14"], tier(0.1, 0.4, 0.025)),
  ...each(["gpt-4o", "gpt-4o-2024-08-06", "gpt-4o-2024-11-20"], tier(2.5, 10, 1.25)),
  ...each(["gpt-4o-mini", "gpt-4o-mini-2024-07-18"], tier(0.15, 0.6, 0.075)),
  ...each(["o3", "o3-2025-04-16"], tier(2, 8, 0.5)),
  ...each(["o3-pro", "o3-pro-2025-06-10"], { input: 20, output: 80 }),
  ...each(["o4-mini", "o4-mini-2025-04-16"], tier(1.1, 4.4, 0.275)),
  ...each(["o3-mini", "o3-mini-2025-01-31"], tier(1.1, 4.4, 0.55)),
  ...each(["o1", "o1-2024-12-17"], tier(15, 60, 7.5)),
  "codex-mini-latest": tier(1.5, 6, 0.375),
};

/** The price of exactly `model`, or undefined: an id is never matched by a prefix. */
export function priceOf(model: string): ModelPrice | undefined {
  return Object.hasOwn(PRICES_PER_MTOK, model) ? PRICES_PER_MTOK[model] : undefined;
}

/** The tier that bills `inputTokens` of input on `price`: its long-prompt tier above its bar. */
export function tierFor(price: ModelPrice, inputTokens: number): Omit<ModelPrice, "longPrompt"> {
  const long = price.longPrompt;
  return long !== undefined && inputTokens > long.aboveTokens ? long : price;
}

/** The estimated cost of `usage` on `model`, or undefined when the model is not priced. */
export function estimateCostUsd(model: string, usage: TokenUsage): number | undefined {
  const listed = priceOf(model);
  if (listed === undefined) return undefined;
  const price = tierFor(listed, usage.inputTokens);
  const cached = usage.cachedInputTokens ?? 0;
  const written = usage.cacheWriteTokens ?? 0;
  const writtenHour = Math.min(written, usage.cacheWrite1hTokens ?? 0);
  const fresh = Math.max(0, usage.inputTokens - cached - written);
  const usd =
    (fresh * price.input +
      cached * (price.cached ?? price.input) +
      (written - writtenHour) * price.input * 1.25 +
      writtenHour * (price.cacheWrite1h ?? price.input * 2) +
      usage.outputTokens * price.output) /
    1_000_000;
  return Math.round(usd * 1_000_000) / 1_000_000;
}

/** Whether a turn of an engine that is priced from its usage on `model` can be priced. */
export function isPricedModel(model: string | undefined): boolean {
  return model !== undefined && priceOf(model) !== undefined;
}
