import type { TokenUsage } from "../engine/commands.js";
import { JudgeError } from "./judge-error.js";
import { renderJudgePrompt, type JudgePrompt } from "./judge-prompt.js";
import type { Judge, JudgeContext, JudgeRequest, Verdict } from "./judge-types.js";
import { estimateCostUsd } from "../workflow/model-prices.js";
import { parseToolVerdict } from "./verdict-tool.js";

/** What one provider call returned: the forced tool call's input, if the model made one. */
export interface ProviderReply {
  /** The tool call's input, parsed; undefined when the reply held no call of the tool. */
  input: unknown;
  /** Why `input` is missing, in the provider's terms (e.g. "stop_reason max_tokens"). */
  missing?: string;
  /** The model that answered, as the provider names it. */
  model: string;
  usage?: TokenUsage;
}

/** One LLM provider behind a judge: one forced-tool call per `ask`. */
export interface JudgeProvider {
  readonly name: "anthropic" | "openai";
  /** Asks once; throws a `JudgeError` (code `provider_error`) when the API fails. */
  ask(prompt: JudgePrompt, labels: readonly string[], model: string): Promise<ProviderReply>;
}

/** Settings of a provider's SDK client, alike for both providers. */
export interface ProviderClientOptions {
  apiKey: string;
  /** A gateway or proxy (`ANTHROPIC_BASE_URL`, `OPENAI_BASE_URL`); the SDK's default otherwise. */
  baseURL?: string;
  /** Retries the SDK makes on 408/409/429/5xx and connection errors (default 2). */
  maxRetries?: number;
  timeoutMs?: number;
}

/** The options both providers' SDK clients take, with the judge's defaults. */
export function sdkClientOptions(options: ProviderClientOptions) {
  return {
    apiKey: options.apiKey,
    maxRetries: options.maxRetries ?? 2,
    timeout: options.timeoutMs ?? 120_000,
    ...(options.baseURL === undefined ? {} : { baseURL: options.baseURL }),
  };
}

/** Attempts per verdict: an invalid or missing tool call is retried once. */
const ATTEMPTS = 2;

/**
 * A judge on an LLM provider. It renders the prompt, forces the verdict tool, validates the
 * tool input with zod (label in the allowed enum, non-empty reasoning), retries an invalid or
 * missing call once, and estimates the cost from token usage.
 */
export class ProviderJudge implements Judge {
  constructor(
    private readonly provider: JudgeProvider,
    private readonly defaultModel: string,
  ) {}

  async decide(request: JudgeRequest, context: JudgeContext): Promise<Verdict> {
    const model = request.judge.model === "" ? this.defaultModel : request.judge.model;
    const prompt = renderJudgePrompt(request, context);
    const problems: string[] = [];
    let usage: TokenUsage | undefined;
    let answered = model;
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      let reply: ProviderReply;
      try {
        reply = await this.provider.ask(prompt, request.labels, model);
      } catch (error) {
        if (!(error instanceof JudgeError)) throw error;
        throw new JudgeError(error.code, error.message, spent(answered, usage), {
          cause: error,
          retryable: error.retryable,
        });
      }
      answered = reply.model;
      usage = addUsage(usage, reply.usage);
      if (reply.input === undefined) {
        problems.push(`no ${this.provider.name} tool call (${reply.missing ?? "no reason given"})`);
        continue;
      }
      const verdict = parseToolVerdict(reply.input, request.labels);
      if (!verdict.ok) {
        problems.push(`invalid tool input: ${verdict.problem}`);
        continue;
      }
      return { label: verdict.label, reasoning: verdict.reasoning, ...spent(answered, usage) };
    }
    throw new JudgeError(
      "invalid_verdict",
      `${this.provider.name} judge gave no valid verdict in ${ATTEMPTS} attempts: ${problems.join("; ")}`,
      spent(answered, usage),
    );
  }
}

function addUsage(
  total: TokenUsage | undefined,
  more: TokenUsage | undefined,
): TokenUsage | undefined {
  if (more === undefined) return total;
  if (total === undefined) return more;
  const cached = (total.cachedInputTokens ?? 0) + (more.cachedInputTokens ?? 0);
  return {
    inputTokens: total.inputTokens + more.inputTokens,
    outputTokens: total.outputTokens + more.outputTokens,
    ...(cached === 0 ? {} : { cachedInputTokens: cached }),
  };
}

function spent(
  model: string,
  usage: TokenUsage | undefined,
): { model: string; usage?: TokenUsage; costUsd?: number } {
  if (usage === undefined) return { model };
  const costUsd = estimateCostUsd(model, usage);
  return { model, usage, ...(costUsd === undefined ? {} : { costUsd }) };
}
