import Anthropic from "@anthropic-ai/sdk";
import {
  ConditionalCheckFailedException,
  ProvisionedThroughputExceededException,
  ResourceNotFoundException,
  ThrottlingException,
} from "@aws-sdk/client-dynamodb";
import { ClusterNotFoundException, ServerException } from "@aws-sdk/client-ecs";
import { RequestError } from "@octokit/request-error";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { JudgeError, providerError } from "../../src/agents/judge-error.js";
import { UsageError } from "../../src/cli/command.js";
import { toEcsError } from "../../src/devbox/ecs/error.js";
import { DevBoxError } from "../../src/devbox/errors.js";
import { GitStepError } from "../../src/devbox/agent/git.js";
import { RepoTokenError } from "../../src/devbox/hub/repo-token.js";
import { AppError, isRetryable } from "../../src/errors/app-error.js";
import { GitHubAppError, toGitHubError } from "../../src/github/client/errors.js";
import { RuntimeError } from "../../src/runtime/runtime-error.js";
import { toStoreError } from "../../src/store/dynamo-error.js";
import { StoreError } from "../../src/store/store-error.js";

/** An Octokit RequestError as `@octokit/request` throws it for an HTTP answer. */
function githubAnswer(status: number, headers: Record<string, string> = {}, message = "no") {
  return new RequestError(message, status, {
    request: { method: "POST", url: "https://api.github.com/repos/a/b/issues", headers: {} },
    response: {
      status,
      url: "https://api.github.com/repos/a/b/issues",
      headers,
      data: { message },
    },
  });
}

const metadata = { $metadata: {} };

describe("AppError", () => {
  it("carries a code, whether to retry (no by default) and the cause", () => {
    const cause = new Error("socket hang up");
    const error = new AppError("somewhere-failed", "it failed", { retryable: true, cause });
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({ name: "AppError", code: "somewhere-failed", retryable: true });
    expect(error.message).toBe("it failed");
    expect(error.cause).toBe(cause);
    const plain = new AppError("x", "y");
    expect(plain.retryable).toBe(false);
    expect("cause" in plain).toBe(false);
  });

  it("is the base of every domain's error", () => {
    const errors = [
      new StoreError("throttled", "m"),
      new GitHubAppError("not_found", "m"),
      new DevBoxError("hub-closed", "m"),
      toEcsError(new Error("m"), "RunTask"),
      new JudgeError("invalid_verdict", "m"),
      new RepoTokenError("unavailable", "m"),
      new RuntimeError("write-conflict", "m"),
      new GitStepError("fetch", 128),
      new UsageError("m"),
    ];
    for (const error of errors) expect(error).toBeInstanceOf(AppError);
    expect(errors.map((error) => error.name)).toEqual([
      "StoreError",
      "GitHubAppError",
      "DevBoxError",
      "EcsError",
      "JudgeError",
      "RepoTokenError",
      "RuntimeError",
      "GitStepError",
      "UsageError",
    ]);
  });
});

describe("isRetryable", () => {
  it("trusts only an AppError's own answer, never a look-alike or its message", () => {
    expect(isRetryable(new StoreError("throttled", "m", { retryable: true }))).toBe(true);
    expect(isRetryable(new StoreError("throttled", "m"))).toBe(false);
    expect(isRetryable(Object.assign(new Error("m"), { retryable: true }))).toBe(false);
    expect(isRetryable(new Error("rate limit exceeded, try again"))).toBe(false);
    expect(isRetryable("retryable")).toBe(false);
    expect(isRetryable(undefined)).toBe(false);
  });

  it.each([
    ["a 502", githubAnswer(502), "unavailable", true],
    ["a 500", githubAnswer(500), "unavailable", true],
    ["a 429", githubAnswer(429), "rate_limited", true],
    [
      "a 403 secondary rate limit (retry-after)",
      githubAnswer(403, { "retry-after": "60" }, "You have exceeded a secondary rate limit"),
      "rate_limited",
      true,
    ],
    [
      "a 403 with the rate limit spent",
      githubAnswer(403, { "x-ratelimit-remaining": "0", "x-ratelimit-reset": "1700000000" }),
      "rate_limited",
      true,
    ],
    ["a plain 403", githubAnswer(403, { "x-ratelimit-remaining": "4999" }), "forbidden", false],
    // The message alone says nothing: a 403 without the headers is a refused permission.
    [
      "a 403 that only mentions a rate limit",
      githubAnswer(403, {}, "rate limit"),
      "forbidden",
      false,
    ],
    ["a 401", githubAnswer(401), "forbidden", false],
    ["a 404", githubAnswer(404), "not_found", false],
    ["a 422", githubAnswer(422), "invalid_request", false],
  ])("maps GitHub's %s once", (_what, error, code, retryable) => {
    const mapped = toGitHubError("create an issue", error);
    expect(mapped).toMatchObject({ code, retryable, status: error.status, cause: error });
    expect(isRetryable(mapped)).toBe(retryable);
  });

  it.each([
    [new ProvisionedThroughputExceededException({ message: "m", ...metadata }), "throttled", true],
    [new ThrottlingException({ message: "m", ...metadata }), "throttled", true],
    [new ConditionalCheckFailedException({ message: "m", ...metadata }), "condition_failed", false],
    [new ResourceNotFoundException({ message: "m", ...metadata }), "not_found", false],
    [Object.assign(new Error("connect"), { code: "ECONNREFUSED" }), "unavailable", true],
  ])("maps DynamoDB's %s once", (error, code, retryable) => {
    const mapped = toStoreError(error, "PutItem");
    expect(mapped).toMatchObject({ code, retryable, cause: error });
    expect(isRetryable(mapped)).toBe(retryable);
  });

  it("maps ECS's errors once", () => {
    const down = toEcsError(new ServerException({ message: "m", ...metadata }), "RunTask");
    const gone = toEcsError(new ClusterNotFoundException({ message: "m", ...metadata }), "RunTask");
    expect(down).toMatchObject({ code: "unavailable", retryable: true });
    expect(gone).toMatchObject({ code: "not_found", retryable: false });
    expect([isRetryable(down), isRetryable(gone)]).toEqual([true, false]);
  });

  it.each([
    [
      "anthropic",
      Anthropic.APIError.generate(529, { type: "overloaded_error" }, "busy", new Headers()),
      true,
    ],
    ["anthropic", Anthropic.APIError.generate(429, undefined, "slow down", new Headers()), true],
    ["anthropic", Anthropic.APIError.generate(401, undefined, "bad key", new Headers()), false],
    ["anthropic", new Anthropic.APIConnectionError({ message: "reset" }), true],
    ["openai", OpenAI.APIError.generate(500, undefined, "oops", new Headers()), true],
    ["openai", OpenAI.APIError.generate(400, undefined, "bad request", new Headers()), false],
  ])("maps a %s API error once, by status", (provider, error, retryable) => {
    const mapped = providerError(provider, error);
    expect(mapped).toMatchObject({ code: "provider_error", retryable, cause: error });
    expect(isRetryable(mapped)).toBe(retryable);
  });

  it("retries a run's lost write race and nothing about a judge that is not configured", () => {
    expect(isRetryable(new RuntimeError("write-conflict", "m", { retryable: true }))).toBe(true);
    expect(isRetryable(new JudgeError("not_configured", "m"))).toBe(false);
    expect(isRetryable(new RepoTokenError("unavailable", "m"))).toBe(true);
    expect(isRetryable(new UsageError("m"))).toBe(false);
  });
});
