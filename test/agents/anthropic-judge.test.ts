import "./promise-with-resolvers.js";
import nock from "nock";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { JudgeError } from "../../src/agents/judge-error.js";
import { judgeFromSettings } from "../../src/runtime/judge.js";
import { decodeSettings } from "../../src/settings/index.js";
import { CONTEXT, TEST_ENV, decisionRequest } from "./judge-fixtures.js";

const API = TEST_ENV.ANTHROPIC_BASE_URL;

/** A Messages API response, as `POST /v1/messages` returns it. */
function message(content: unknown[], stopReason = "tool_use") {
  return {
    id: "msg_01",
    type: "message",
    role: "assistant",
    model: "claude-opus-4-1-20250805",
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage: {
      input_tokens: 1200,
      output_tokens: 80,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    },
  };
}

const toolUse = (input: unknown) => ({
  type: "tool_use",
  id: "toolu_01",
  name: "record_verdict",
  input,
});

type Body = Record<string, unknown>;

function judge() {
  return judgeFromSettings(decodeSettings({ ...TEST_ENV, OPENAI_API_KEY: "" }).providers, {
    maxRetries: 0,
  });
}

beforeAll(() => nock.disableNetConnect());
afterEach(() => {
  const pending = nock.pendingMocks();
  nock.cleanAll();
  expect(pending).toEqual([]);
});

describe("anthropic judge (Messages API on nock)", () => {
  it("forces the verdict tool, with the labels as an enum, and returns a valid verdict", async () => {
    let body: Body = {};
    const scope = nock(API)
      .post("/v1/messages", (b: Body) => ((body = b), true))
      .matchHeader("x-api-key", "test-anthropic-key")
      .reply(
        200,
        message([toolUse({ label: "approved", reasoning: "The slice now keeps n items." })]),
      );
    const verdict = await judge().decide(decisionRequest("anthropic", "claude-opus-4-1"), CONTEXT);
    scope.done();
    expect(body.tool_choice).toEqual({ type: "tool", name: "record_verdict" });
    expect(body.model).toBe("claude-opus-4-1");
    const [tool, ...others] = body.tools as {
      name: string;
      input_schema: { required: string[]; properties: { label: { enum: string[] } } };
    }[];
    expect(others).toEqual([]);
    expect(tool?.name).toBe("record_verdict");
    expect(tool?.input_schema.required).toEqual(["label", "reasoning"]);
    expect(tool?.input_schema.properties.label.enum).toEqual(["approved", "needs-changes"]);
    const user = JSON.stringify(body.messages);
    expect(user).toContain("Fix the off-by-one in pagination.");
    expect(user).toContain("items.slice(0, n)");
    expect(user).toContain("loop.iteration");
    expect(verdict).toEqual({
      label: "approved",
      reasoning: "The slice now keeps n items.",
      model: "claude-opus-4-1-20250805",
      usage: { inputTokens: 1200, outputTokens: 80 },
      // 1200 × $15/MTok + 80 × $75/MTok
      costUsd: 0.024,
    });
  });

  it("retries an out-of-enum label once, then gives up with the reason", async () => {
    const scope = nock(API)
      .post("/v1/messages")
      .twice()
      .reply(200, message([toolUse({ label: "ship-it", reasoning: "Looks great." })]));
    const error = await judge()
      .decide(decisionRequest("anthropic", "claude-opus-4-1"), CONTEXT)
      .catch((e: unknown) => e);
    scope.done();
    expect(error).toBeInstanceOf(JudgeError);
    expect((error as JudgeError).code).toBe("invalid_verdict");
    expect((error as JudgeError).message).toMatch(
      /anthropic judge gave no valid verdict in 2 attempts: invalid tool input: label: Invalid option/,
    );
    // Both attempts are charged.
    expect((error as JudgeError).spent.usage).toEqual({ inputTokens: 2400, outputTokens: 160 });
  });

  it("accepts a valid answer on the retry after a missing tool call", async () => {
    const scope = nock(API)
      .post("/v1/messages")
      .reply(200, message([{ type: "text", text: "I think it is fine." }], "end_turn"))
      .post("/v1/messages")
      .reply(200, message([toolUse({ label: "needs-changes", reasoning: "No test covers it." })]));
    const verdict = await judge().decide(decisionRequest("anthropic", "claude-opus-4-1"), CONTEXT);
    scope.done();
    expect(verdict.label).toBe("needs-changes");
  });

  it("fails with the reason when the tool call is missing twice", async () => {
    const scope = nock(API)
      .post("/v1/messages")
      .twice()
      .reply(200, message([{ type: "text", text: "Sure." }], "end_turn"));
    await expect(
      judge().decide(decisionRequest("anthropic", "claude-opus-4-1"), CONTEXT),
    ).rejects.toThrow(/no anthropic tool call \(stop_reason end_turn\)/);
    scope.done();
  });

  it.each([
    [429, "rate_limit_error", "Number of request tokens has exceeded your rate limit."],
    [500, "api_error", "Internal server error"],
  ])("fails on HTTP %i once the SDK's retries are spent", async (status, type, text) => {
    const scope = nock(API)
      .post("/v1/messages")
      .reply(status, { type: "error", error: { type, message: text } });
    const error = await judge()
      .decide(decisionRequest("anthropic", "claude-opus-4-1"), CONTEXT)
      .catch((e: unknown) => e);
    scope.done();
    expect(error).toBeInstanceOf(JudgeError);
    expect((error as JudgeError).code).toBe("provider_error");
    expect((error as JudgeError).retryable).toBe(true);
    expect((error as JudgeError).message).toContain(`anthropic API error (HTTP ${status})`);
  });

  it("says which key is missing when the request's provider has none", async () => {
    const only = judgeFromSettings(
      decodeSettings({ OPENAI_API_KEY: "k", OPENAI_BASE_URL: TEST_ENV.OPENAI_BASE_URL }).providers,
    );
    await expect(
      only.decide(decisionRequest("anthropic", "claude-opus-4-1"), CONTEXT),
    ).rejects.toThrow("the anthropic judge needs ANTHROPIC_API_KEY in the app's environment");
  });
});
