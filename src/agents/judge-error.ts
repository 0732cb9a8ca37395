import type { TokenUsage } from "../engine/commands.js";

/** Why a judge gave no verdict. */
export type JudgeErrorCode = "invalid_verdict" | "provider_error" | "not_configured";

/**
 * A judge that gave no verdict: the provider failed (after the SDK's own retries) or answered
 * twice without a valid tool call. Carries what the failed attempts cost, so the run is charged.
 */
export class JudgeError extends Error {
  override readonly name = "JudgeError";

  constructor(
    readonly code: JudgeErrorCode,
    message: string,
    readonly spent: { model?: string; usage?: TokenUsage; costUsd?: number } = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  /** Whether asking again later might help (a provider outage or rate limit). */
  get retryable(): boolean {
    return this.code === "provider_error";
  }
}
