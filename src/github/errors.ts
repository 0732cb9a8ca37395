import { StoreError } from "../store/store-error.js";
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

/** May the same work succeed if tried again later (a GitHub or store error that says so)? */
export function isRetryable(error: unknown): boolean {
  return (error instanceof GitHubAppError || error instanceof StoreError) && error.retryable;
}

/** The one error type the GitHub adapter throws. `cause` keeps Octokit's error for logs. */
export class GitHubAppError extends Error {
  override readonly name = "GitHubAppError";
  /** What went wrong, for callers to branch on. */
  readonly code: GitHubErrorCode;
  /** True when the same call may succeed if tried again later. */
  readonly retryable: boolean;
  /** The HTTP status, when GitHub answered. */
  readonly status: number | undefined;

  constructor(
    code: GitHubErrorCode,
    message: string,
    options: { retryable?: boolean; cause?: unknown; status?: number } = {},
  ) {
    super(message, { cause: options.cause });
    this.code = code;
    this.retryable = options.retryable ?? false;
    this.status = options.status;
  }
}

/** Maps an error thrown by an Octokit call (a RequestError carries `status`) once, by status. */
export function toGitHubError(what: string, error: unknown): GitHubAppError {
  if (error instanceof GitHubAppError) return error;
  const status = (error as { status?: unknown } | undefined)?.status;
  const code = typeof status === "number" ? codeOf(status) : "unavailable";
  const detail = error instanceof Error ? error.message : String(error);
  return new GitHubAppError(code, `${what}: ${detail}`, {
    retryable: code === "unavailable" || code === "rate_limited",
    cause: error,
    ...(typeof status === "number" ? { status } : {}),
  });
}

function codeOf(status: number): GitHubErrorCode {
  if (status === 404) return "not_found";
  if (status === 429) return "rate_limited";
  if (status === 401 || status === 403) return "forbidden";
  if (status >= 500) return "unavailable";
  return "invalid_request";
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
