import type OpenAI from "openai";
import { providerError } from "./judge-error.js";
import type { JudgePrompt } from "./judge-prompt.js";
import {
  sdkClientOptions,
  type JudgeProvider,
  type ProviderClientOptions,
  type ProviderReply,
} from "./provider-judge.js";
import { VERDICT_TOOL_DESCRIPTION, VERDICT_TOOL_NAME, verdictInputSchema } from "./verdict-tool.js";

/** The model an OpenAI judge uses when the request names none. */
export const DEFAULT_OPENAI_JUDGE_MODEL = "gpt-5";
const MAX_TOKENS = 4096;

/** Settings of an OpenAI judge. Keys come from the app's environment, never the workflow. */
export type OpenAIJudgeOptions = ProviderClientOptions;

/**
 * Chat Completions (`POST /v1/chat/completions`) with one strict function tool and
 * `tool_choice: {type: "function", function: {name}}`, forcing the call; the verdict is the
 * call's JSON arguments.
 */
export class OpenAIProvider implements JudgeProvider {
  readonly name = "openai";
  #client: OpenAI | undefined;

  constructor(private readonly options: OpenAIJudgeOptions) {}

  async ask(prompt: JudgePrompt, labels: readonly string[], model: string): Promise<ProviderReply> {
    // Loaded at the first question: an app without this judge never loads the SDK.
    const { default: Sdk } = await import("openai");
    this.#client ??= new Sdk(sdkClientOptions(this.options));
    let completion: OpenAI.ChatCompletion;
    try {
      completion = await this.#client.chat.completions.create({
        model,
        max_completion_tokens: MAX_TOKENS,
        messages: [
          { role: "system", content: prompt.system },
          { role: "user", content: prompt.user },
        ],
        tools: [
          {
            type: "function",
            function: {
              name: VERDICT_TOOL_NAME,
              description: VERDICT_TOOL_DESCRIPTION,
              parameters: verdictInputSchema(labels),
              strict: true,
            },
          },
        ],
        tool_choice: { type: "function", function: { name: VERDICT_TOOL_NAME } },
      });
    } catch (error) {
      if (!(error instanceof Sdk.APIError)) throw error;
      throw providerError("openai", error);
    }
    const choice = completion.choices[0];
    const call = choice?.message.tool_calls?.find(
      (candidate) => candidate.type === "function" && candidate.function.name === VERDICT_TOOL_NAME,
    );
    const usage = completion.usage;
    const cached = usage?.prompt_tokens_details?.cached_tokens ?? 0;
    const reply: ProviderReply = {
      input: undefined,
      model: completion.model,
      ...(usage === undefined
        ? {}
        : {
            usage: {
              inputTokens: usage.prompt_tokens,
              outputTokens: usage.completion_tokens,
              ...(cached === 0 ? {} : { cachedInputTokens: cached }),
            },
          }),
    };
    if (call === undefined || call.type !== "function") {
      reply.missing = `finish_reason ${choice?.finish_reason ?? "none"}`;
      return reply;
    }
    try {
      reply.input = JSON.parse(call.function.arguments) as unknown;
    } catch (error) {
      if (!(error instanceof SyntaxError)) throw error;
      reply.missing = "the tool call's arguments are not JSON";
    }
    return reply;
  }
}
