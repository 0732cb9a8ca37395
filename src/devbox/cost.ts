import type { TokenUsage } from "../engine/commands.js";

/** Most candidate starts tried when looking for the last JSON object (bounds the work). */
const MAX_ATTEMPTS = 200;

/**
 * The last JSON object an agent CLI printed: the last line that is a JSON object (JSON Lines
 * output), else the last object that starts a line and runs to the end (pretty-printed output).
 */
export function findLastJsonObject(stdout: string): Record<string, unknown> | undefined {
  const text = stdout.trimEnd();
  let attempts = 0;
  for (let end = text.length; end > 0 && attempts < MAX_ATTEMPTS; attempts++) {
    const start = text.lastIndexOf("\n", end - 1) + 1;
    const line = text.slice(start, end).trim();
    if (line.startsWith("{")) {
      const object = parseObject(line) ?? parseObject(text.slice(start));
      if (object !== undefined) return object;
    }
    end = start - 1;
  }
  return undefined;
}

/** The value at a dotted path (`usage.total_cost_usd`) inside `object`. */
export function readDottedPath(object: Record<string, unknown>, path: string): unknown {
  let value: unknown = object;
  for (const key of path.split(".")) {
    if (typeof value !== "object" || value === null || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/** Reads the cost an agent reported at `path` of its last JSON object; undefined when absent. */
export function readReportedCost(stdout: string, path: string): number | undefined {
  const object = findLastJsonObject(stdout);
  return object === undefined ? undefined : costAt(object, path);
}

/** What an agent CLI said it spent, and which of the asked-for reports were not found. */
export interface AgentSpend {
  costUsd?: number;
  usage?: TokenUsage;
  /** The paths asked for that held no usable value. */
  missing: string[];
}

/** Reads cost and token usage from the last JSON object an agent CLI printed on stdout. */
export function readAgentSpend(
  stdout: string,
  paths: { costJsonPath?: string; usageJsonPath?: string },
): AgentSpend {
  const object = findLastJsonObject(stdout) ?? {};
  const spend: AgentSpend = { missing: [] };
  if (paths.costJsonPath !== undefined) {
    const costUsd = costAt(object, paths.costJsonPath);
    if (costUsd === undefined) spend.missing.push(paths.costJsonPath);
    else spend.costUsd = costUsd;
  }
  if (paths.usageJsonPath !== undefined) {
    const usage = normalizeUsage(readDottedPath(object, paths.usageJsonPath));
    if (usage === undefined) spend.missing.push(paths.usageJsonPath);
    else spend.usage = usage;
  }
  return spend;
}

/**
 * Token usage in the shapes agent CLIs print: Anthropic's (`input_tokens` without the cache
 * reads and writes, which are added), OpenAI's and Codex's (`input_tokens`/`prompt_tokens`
 * including cached ones), or ours (`inputTokens`).
 */
export function normalizeUsage(value: unknown): TokenUsage | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const usage = value as Record<string, unknown>;
  const count = (path: string) => {
    const found = readDottedPath(usage, path);
    return typeof found === "number" && Number.isInteger(found) && found >= 0 ? found : undefined;
  };
  const cacheRead = count("cache_read_input_tokens");
  const cacheWrite = count("cache_creation_input_tokens");
  const anthropic = cacheRead !== undefined || cacheWrite !== undefined;
  const input = count("input_tokens") ?? count("prompt_tokens") ?? count("inputTokens");
  const output = count("output_tokens") ?? count("completion_tokens") ?? count("outputTokens");
  if (input === undefined || output === undefined) return undefined;
  const cached =
    cacheRead ??
    count("cached_input_tokens") ??
    count("prompt_tokens_details.cached_tokens") ??
    count("cachedInputTokens");
  return {
    inputTokens: anthropic ? input + (cacheRead ?? 0) + (cacheWrite ?? 0) : input,
    outputTokens: output,
    ...(cached === undefined || cached === 0 ? {} : { cachedInputTokens: cached }),
  };
}

function costAt(object: Record<string, unknown>, path: string): number | undefined {
  const value = readDottedPath(object, path);
  const cost = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
  return typeof cost === "number" && Number.isFinite(cost) && cost >= 0 ? cost : undefined;
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch (error) {
    if (error instanceof SyntaxError) return undefined;
    throw error;
  }
}
