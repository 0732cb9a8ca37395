import type Anthropic from "@anthropic-ai/sdk";
import { providerError } from "./judge-error.js";
import type { JudgePrompt } from "./judge-prompt.js";
import {
  sdkClientOptions,
  type JudgeProvider,
  type ProviderClientOptions,
  type ProviderReply,
} from "./provider-judge.js";
import { VERDICT_TOOL_DESCRIPTION, VERDICT_TOOL_NAME, verdictInputSchema } from "./verdict-tool.js";

/** The model an Anthropic judge uses when the request names none. */
export const DEFAULT_ANTHROPIC_JUDGE_MODEL = "claude-sonnet-4-5";
const MAX_TOKENS = 2048;

/** Settings of an Anthropic judge. Keys come from the app's environment, never the workflow. */
export type AnthropicJudgeOptions = ProviderClientOptions;

/**
 * The Messages API (`POST /v1/messages`) with one tool and `tool_choice: {type: "tool"}`, so
 * the model must answer by calling it; the verdict is the `tool_use` block's input.
 */
export class AnthropicProvider implements JudgeProvider {
  readonly name = "anthropic";
  #client: Anthropic | undefined;

  constructor(private readonly options: AnthropicJudgeOptions) {}

  async ask(prompt: JudgePrompt, labels: readonly string[], model: string): Promise<ProviderReply> {
    // Loaded at the first question: an app without this judge never loads the SDK.
    const { default: Sdk } = await import("@anthropic-ai/sdk");
    this.#client ??= new Sdk(sdkClientOptions(this.options));
    let message: Anthropic.Message;
    try {
      message = await this.#client.messages.create({
        model,
        max_tokens: MAX_TOKENS,
        system: prompt.system,
        messages: [{ role: "user", content: prompt.user }],
        tools: [
          {
            name: VERDICT_TOOL_NAME,
            description: VERDICT_TOOL_DESCRIPTION,
            input_schema: verdictInputSchema(labels),
          },
        ],
        tool_choice: { type: "tool", name: VERDICT_TOOL_NAME },
      });
    } catch (error) {
      if (!(error instanceof Sdk.APIError)) throw error;
      throw providerError("anthropic", error);
    }
    const call = message.content.find(
      (block) => block.type === "tool_use" && block.name === VERDICT_TOOL_NAME,
    );
    const usage = message.usage;
    const cached = usage.cache_read_input_tokens ?? 0;
    const reply: ProviderReply = {
      input: call?.type === "tool_use" ? call.input : undefined,
      model: message.model,
      usage: {
        inputTokens: usage.input_tokens + cached + (usage.cache_creation_input_tokens ?? 0),
        outputTokens: usage.output_tokens,
        ...(cached === 0 ? {} : { cachedInputTokens: cached }),
      },
    };
    if (call === undefined) reply.missing = `stop_reason ${message.stop_reason ?? "unknown"}`;
    return reply;
  }
}
