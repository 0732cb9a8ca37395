/** Tokens an agent or a judge reported using. */
export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  /** Input tokens served from a prompt cache, when reported. */
  cachedInputTokens?: number;
}

/**
 * US dollars per million tokens, by model-name prefix (the longest matching prefix wins).
 * An ESTIMATE from the providers' public list prices (2026): it ignores batch and
 * long-context tiers, and a gateway may bill differently. Cached input is billed at the
 * `cached` rate when the provider reports it. A model not listed here is not priced, and a
 * verdict from it carries no cost.
 */
export const PRICES_PER_MTOK: Readonly<
  Record<string, { input: number; output: number; cached?: number }>
> = {
  "claude-opus-4-5": { input: 5, output: 25, cached: 0.5 },
  "claude-opus-4": { input: 15, output: 75, cached: 1.5 },
  "claude-sonnet-4": { input: 3, output: 15, cached: 0.3 },
  "claude-haiku-4": { input: 1, output: 5, cached: 0.1 },
  "claude-3-5-haiku": { input: 0.8, output: 4, cached: 0.08 },
  "gpt-5-nano": { input: 0.05, output: 0.4, cached: 0.005 },
  "gpt-5-mini": { input: 0.25, output: 2, cached: 0.025 },
  "gpt-5": { input: 1.25, output: 10, cached: 0.125 },
  "gpt-4.1-mini": { input: 0.4, output: 1.6, cached: 0.1 },
  "gpt-4.1": { input: 2, output: 8, cached: 0.5 },
  "gpt-4o-mini": { input: 0.15, output: 0.6, cached: 0.075 },
  "gpt-4o": { input: 2.5, output: 10, cached: 1.25 },
  o3: { input: 2, output: 8, cached: 0.5 },
  "o4-mini": { input: 1.1, output: 4.4, cached: 0.275 },
};

/** The estimated cost of `usage` on `model`, or undefined when the model is not priced. */
export function estimateCostUsd(model: string, usage: TokenUsage): number | undefined {
  const prefix = Object.keys(PRICES_PER_MTOK)
    .filter((candidate) => model.startsWith(candidate))
    .sort((a, b) => b.length - a.length)[0];
  const price = prefix === undefined ? undefined : PRICES_PER_MTOK[prefix];
  if (price === undefined) return undefined;
  const cached = usage.cachedInputTokens ?? 0;
  const fresh = Math.max(0, usage.inputTokens - cached);
  const usd =
    (fresh * price.input +
      cached * (price.cached ?? price.input) +
      usage.outputTokens * price.output) /
    1_000_000;
  return Math.round(usd * 1_000_000) / 1_000_000;
}

/** Whether a turn of an engine that is priced from its usage on `model` can be priced. */
export function isPricedModel(model: string | undefined): boolean {
  return (
    model !== undefined && estimateCostUsd(model, { inputTokens: 0, outputTokens: 0 }) !== undefined
  );
}
