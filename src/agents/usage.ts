import type { TokenUsage } from "../engine/commands.js";

/**
 * The token usage an agent CLI reported, read from the object at dotted `path` of the last JSON
 * it printed, and normalised so `inputTokens` counts all input (cached included):
 * - Claude Code (`usage`): `input_tokens` excludes the cache, so `cache_read_input_tokens` and
 *   `cache_creation_input_tokens` are added, and cache reads are the cached part;
 * - Codex (`turn.completed` → `usage`): `input_tokens` includes `cached_input_tokens`.
 * Undefined when there is no such object or it has no numeric input and output counts.
 */
export function readTokenUsage(
  report: Record<string, unknown>,
  path: string,
): TokenUsage | undefined {
  const value = valueAt(report, path);
  if (typeof value !== "object" || value === null) return undefined;
  const usage = value as Record<string, unknown>;
  const count = (key: string): number | undefined => {
    const n = usage[key];
    return typeof n === "number" && Number.isFinite(n) && n >= 0 ? n : undefined;
  };
  const input = count("input_tokens") ?? count("prompt_tokens");
  const output = count("output_tokens") ?? count("completion_tokens");
  if (input === undefined || output === undefined) return undefined;
  const cacheRead = count("cache_read_input_tokens");
  if (cacheRead !== undefined) {
    const total = input + cacheRead + (count("cache_creation_input_tokens") ?? 0);
    return {
      inputTokens: total,
      outputTokens: output,
      ...(cacheRead === 0 ? {} : { cachedInputTokens: cacheRead }),
    };
  }
  const cached = count("cached_input_tokens");
  return {
    inputTokens: input,
    outputTokens: output,
    ...(cached === undefined || cached === 0 ? {} : { cachedInputTokens: cached }),
  };
}

function valueAt(object: Record<string, unknown>, path: string): unknown {
  let value: unknown = object;
  for (const key of path.split(".")) {
    if (typeof value !== "object" || value === null || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}
