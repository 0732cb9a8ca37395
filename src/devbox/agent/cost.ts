import { estimateCostUsd } from "../../workflow/model-prices.js";
import type { TokenUsage, UsagePaths } from "../../engine/commands.js";

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

/** Where an agent reports its spend, and whether to price its usage when it reports no cost. */
export interface SpendReport {
  costJsonPath?: string;
  usageJsonPath?: string;
  usagePaths?: UsagePaths;
  priceFromUsage?: boolean;
  model?: string;
}

/**
 * Reads cost and token usage from the last JSON object an agent CLI printed on stdout. An agent
 * that reports tokens but no cost is priced from the model price table when asked to be.
 */
export function readAgentSpend(stdout: string, report: SpendReport): AgentSpend {
  const object = findLastJsonObject(stdout) ?? {};
  const spend: AgentSpend = { missing: [] };
  if (report.costJsonPath !== undefined) {
    const costUsd = costAt(object, report.costJsonPath);
    if (costUsd === undefined) spend.missing.push(report.costJsonPath);
    else spend.costUsd = costUsd;
  }
  if (report.usageJsonPath !== undefined) {
    const usage = normalizeUsage(readDottedPath(object, report.usageJsonPath));
    if (usage === undefined) spend.missing.push(report.usageJsonPath);
    else spend.usage = usage;
  }
  if (report.usagePaths !== undefined) {
    const { usage, missing } = usageAt(object, report.usagePaths);
    spend.missing.push(...missing);
    if (usage !== undefined) spend.usage = usage;
  }
  if (report.priceFromUsage === true && spend.costUsd === undefined && spend.usage !== undefined) {
    const costUsd =
      report.model === undefined ? undefined : estimateCostUsd(report.model, spend.usage);
    if (costUsd !== undefined) spend.costUsd = costUsd;
  }
  return spend;
}

/** Token counts at the declared paths, and the paths that held no count. */
function usageAt(
  object: Record<string, unknown>,
  paths: UsagePaths,
): { usage?: TokenUsage; missing: string[] } {
  const missing: string[] = [];
  const count = (path: string | undefined) => {
    if (path === undefined) return undefined;
    const value = readDottedPath(object, path);
    if (typeof value === "number" && Number.isInteger(value) && value >= 0) return value;
    missing.push(path);
    return undefined;
  };
  const inputTokens = count(paths.inputTokens);
  const outputTokens = count(paths.outputTokens);
  const cached = count(paths.cachedInputTokens);
  if (inputTokens === undefined || outputTokens === undefined) return { missing };
  const usage: TokenUsage = {
    inputTokens,
    outputTokens,
    ...(cached === undefined || cached === 0 ? {} : { cachedInputTokens: cached }),
  };
  return { usage, missing };
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
