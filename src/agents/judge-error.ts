import type { TokenUsage } from "../engine/commands.js";
import { AppError } from "../errors/app-error.js";

/** Why a judge gave no verdict. */
export type JudgeErrorCode =
  /** The provider answered twice without a valid verdict tool call; or a command printed none. */
  | "invalid_verdict"
  /** The provider's API failed (after the SDK's own retries); `retryable` follows its status. */
  | "provider_error"
  /** No judge, or no key for the request's provider, is configured. */
  | "not_configured"
  /** The judge command could not be run or exited with an error. */
  | "command_failed";

/** What the failed attempts of a judge cost, so the run is charged. */
export interface JudgeSpend {
  model?: string;
  usage?: TokenUsage;
  costUsd?: number;
}

/**
 * A judge that gave no verdict: the provider failed (after the SDK's own retries) or answered
 * twice without a valid tool call. Carries what the failed attempts cost, so the run is charged.
 */
export class JudgeError extends AppError<JudgeErrorCode> {
  override readonly name = "JudgeError";

  constructor(
    code: JudgeErrorCode,
    message: string,
    readonly spent: JudgeSpend = {},
    options: { cause?: unknown; retryable?: boolean } = {},
  ) {
    super(code, message, options);
  }
}

/**
 * Maps a provider SDK's API error (`status` undefined when no answer came) once, by status: a
 * timeout, conflict, rate limit, 5xx or lost connection may pass later, as the SDKs' own
 * retries assume; any other status (a bad key, a malformed request) will not.
 */
export function providerError(
  provider: string,
  error: { status?: number | undefined; message: string },
): JudgeError {
  const { status } = error;
  const what = status === undefined ? "no response" : `HTTP ${status}`;
  const retryable =
    status === undefined || status === 408 || status === 409 || status === 429 || status >= 500;
  return new JudgeError(
    "provider_error",
    `${provider} API error (${what}): ${error.message}`,
    {},
    {
      cause: error,
      retryable,
    },
  );
}
