import "./promise-with-resolvers.js";
import nock from "nock";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { JudgeError } from "../../src/agents/judge-error.js";
import { judgeFromSettings } from "../../src/runtime/judge.js";
import { decodeSettings } from "../../src/settings/index.js";
import { CONTEXT, TEST_ENV, decisionRequest } from "./judge-fixtures.js";

const API = "https://openai.test";

/** A Chat Completions response, as `POST /v1/chat/completions` returns it. */
function completion(message: Record<string, unknown>, finishReason = "tool_calls") {
  return {
    id: "chatcmpl-1",
    object: "chat.completion",
    created: 1_767_225_600,
    model: "gpt-5-2025-08-07",
    choices: [
      {
        index: 0,
        message: { role: "assistant", content: null, refusal: null, ...message },
        logprobs: null,
        finish_reason: finishReason,
      },
    ],
    usage: {
      prompt_tokens: 2000,
      completion_tokens: 100,
      total_tokens: 2100,
      prompt_tokens_details: { cached_tokens: 1000 },
    },
  };
}

const toolCall = (args: string) => ({
  tool_calls: [
    {
      id: "call_1",
      type: "function",
      function: { name: "record_verdict", arguments: args },
    },
  ],
});

type Body = Record<string, unknown>;

function judge() {
  return judgeFromSettings(decodeSettings({ ...TEST_ENV, ANTHROPIC_API_KEY: "" }).providers, {
    maxRetries: 0,
  });
}

beforeAll(() => nock.disableNetConnect());
afterEach(() => {
  const pending = nock.pendingMocks();
  nock.cleanAll();
  expect(pending).toEqual([]);
});

describe("openai judge (Chat Completions on nock)", () => {
  it("forces the function call, with the labels as an enum, and returns a valid verdict", async () => {
    let body: Body = {};
    const scope = nock(API)
      .post("/v1/chat/completions", (b: Body) => ((body = b), true))
      .matchHeader("authorization", "Bearer test-openai-key")
      .reply(
        200,
        completion(toolCall(JSON.stringify({ label: "needs-changes", reasoning: "No test." }))),
      );
    const verdict = await judge().decide(decisionRequest("openai", "gpt-5"), CONTEXT);
    scope.done();
    expect(body.tool_choice).toEqual({ type: "function", function: { name: "record_verdict" } });
    const [tool, ...others] = body.tools as {
      type: string;
      function: {
        name: string;
        strict: boolean;
        parameters: { required: string[]; properties: { label: { enum: string[] } } };
      };
    }[];
    expect(others).toEqual([]);
    expect(tool?.type).toBe("function");
    expect(tool?.function.name).toBe("record_verdict");
    expect(tool?.function.strict).toBe(true);
    expect(tool?.function.parameters.required).toEqual(["label", "reasoning"]);
    expect(tool?.function.parameters.properties.label.enum).toEqual(["approved", "needs-changes"]);
    expect(JSON.stringify(body.messages)).toContain("Fix the off-by-one in pagination.");
    expect(verdict).toEqual({
      label: "needs-changes",
      reasoning: "No test.",
      model: "gpt-5-2025-08-07",
      usage: { inputTokens: 2000, outputTokens: 100, cachedInputTokens: 1000 },
      // 1000 × $1.25 + 1000 cached × $0.125 + 100 × $10, per MTok
      costUsd: 0.002375,
    });
  });

  it("retries an out-of-enum label once, then gives up with the reason", async () => {
    const args = JSON.stringify({ label: "merge", reasoning: "Fine." });
    const scope = nock(API)
      .post("/v1/chat/completions")
      .twice()
      .reply(200, completion(toolCall(args)));
    await expect(judge().decide(decisionRequest("openai", "gpt-5"), CONTEXT)).rejects.toThrow(
      /openai judge gave no valid verdict in 2 attempts: invalid tool input: label: Invalid option.*; invalid tool input: label/,
    );
    scope.done();
  });

  it("retries a missing reasoning, and takes the valid second answer", async () => {
    const scope = nock(API)
      .post("/v1/chat/completions")
      .reply(200, completion(toolCall(JSON.stringify({ label: "approved" }))))
      .post("/v1/chat/completions")
      .reply(
        200,
        completion(toolCall(JSON.stringify({ label: "approved", reasoning: "Tested." }))),
      );
    const verdict = await judge().decide(decisionRequest("openai", "gpt-5"), CONTEXT);
    scope.done();
    expect(verdict.label).toBe("approved");
    expect(verdict.usage?.inputTokens).toBe(4000);
  });

  it("fails with the reason when no tool call comes back twice", async () => {
    const scope = nock(API)
      .post("/v1/chat/completions")
      .twice()
      .reply(200, completion({ content: "It looks fine to me." }, "stop"));
    await expect(judge().decide(decisionRequest("openai", "gpt-5"), CONTEXT)).rejects.toThrow(
      /no openai tool call \(finish_reason stop\)/,
    );
    scope.done();
  });

  it.each([
    [429, "rate_limit_exceeded", "Rate limit reached for gpt-5"],
    [500, "server_error", "The server had an error while processing your request."],
  ])("fails on HTTP %i once the SDK's retries are spent", async (status, code, text) => {
    const scope = nock(API)
      .post("/v1/chat/completions")
      .reply(status, { error: { message: text, type: code, param: null, code } });
    const error = await judge()
      .decide(decisionRequest("openai", "gpt-5"), CONTEXT)
      .catch((e: unknown) => e);
    scope.done();
    expect(error).toBeInstanceOf(JudgeError);
    expect((error as JudgeError).code).toBe("provider_error");
    expect((error as JudgeError).message).toContain(`openai API error (HTTP ${status})`);
  });

  it("lets the SDK retry a 429 before answering", async () => {
    const scope = nock(API)
      .post("/v1/chat/completions")
      .reply(
        429,
        { error: { message: "slow down", type: "rate_limit_exceeded" } },
        {
          "retry-after-ms": "1",
        },
      )
      .post("/v1/chat/completions")
      .reply(200, completion(toolCall(JSON.stringify({ label: "approved", reasoning: "Ok." }))));
    const retrying = judgeFromSettings(
      decodeSettings({ ...TEST_ENV, ANTHROPIC_API_KEY: "" }).providers,
      { maxRetries: 1 },
    );
    const verdict = await retrying.decide(decisionRequest("openai", "gpt-5"), CONTEXT);
    scope.done();
    expect(verdict.label).toBe("approved");
  });
});
