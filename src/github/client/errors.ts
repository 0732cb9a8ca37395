import { AppError } from "../../errors/app-error.js";

/** What went wrong talking to GitHub, in the app's words. */
export type GitHubErrorCode =
  /** The resource does not exist, or the app cannot see it. */
  | "not_found"
  /** The app's installation lacks a permission, or the request was forbidden. */
  | "forbidden"
  /** GitHub asked us to slow down (rate limits, secondary limits). */
  | "rate_limited"
  /** GitHub rejected the request as malformed (422 and other 4xx). */
  | "invalid_request"
  /** GitHub could not be reached or failed on its side (network, 5xx). */
  | "unavailable";

/** The one error type the GitHub adapter throws. `cause` keeps Octokit's error for logs. */
export class GitHubAppError extends AppError<GitHubErrorCode> {
  override readonly name = "GitHubAppError";
  /** The HTTP status, when GitHub answered. */
  readonly status: number | undefined;

  constructor(
    code: GitHubErrorCode,
    message: string,
    options: { retryable?: boolean; cause?: unknown; status?: number } = {},
  ) {
    super(code, message, options);
    this.status = options.status;
  }
}

/**
 * Maps an error thrown by an Octokit call once, by its HTTP status and response headers (a
 * RequestError carries `status` and `response.headers`), never by its message.
 */
export function toGitHubError(what: string, error: unknown): GitHubAppError {
  if (error instanceof GitHubAppError) return error;
  const status = readField(error, "status");
  const code =
    typeof status === "number" ? codeOf(status, headersOf(error)) : ("unavailable" as const);
  const detail = error instanceof Error ? error.message : String(error);
  return new GitHubAppError(code, `${what}: ${detail}`, {
    retryable: code === "unavailable" || code === "rate_limited",
    cause: error,
    ...(typeof status === "number" ? { status } : {}),
  });
}

function codeOf(status: number, headers: Record<string, unknown>): GitHubErrorCode {
  if (status === 404) return "not_found";
  if (status === 429) return "rate_limited";
  if (status === 403 && isRateLimit(headers)) return "rate_limited";
  if (status === 401 || status === 403) return "forbidden";
  if (status >= 500) return "unavailable";
  return "invalid_request";
}

/**
 * GitHub answers a rate limit with 403 or 429: a secondary limit says `retry-after`, a spent
 * primary limit `x-ratelimit-remaining: 0`. A 403 with neither is a refused permission.
 */
function isRateLimit(headers: Record<string, unknown>): boolean {
  return headers["retry-after"] !== undefined || String(headers["x-ratelimit-remaining"]) === "0";
}

function headersOf(error: unknown): Record<string, unknown> {
  const headers = readField(readField(error, "response"), "headers");
  return typeof headers === "object" && headers !== null
    ? (headers as Record<string, unknown>)
    : {};
}

function readField(value: unknown, key: string): unknown {
  return typeof value === "object" && value !== null
    ? (value as Record<string, unknown>)[key]
    : undefined;
}

/** Runs one GitHub call, mapping its failure to a {@link GitHubAppError}. */
export async function callGitHub<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw toGitHubError(what, error);
  }
}

/** True for a GitHub 404 (the thing is absent), which callers often treat as data. */
export function isNotFound(error: unknown): boolean {
  return error instanceof GitHubAppError && error.code === "not_found";
}
