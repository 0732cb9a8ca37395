/** How an {@link AppError} is built beyond its code and message. */
export interface AppErrorOptions {
  /** True when the same work may succeed if tried again later; default false. */
  retryable?: boolean;
  /** The error this one maps (an SDK's, Octokit's), kept for logs. */
  cause?: unknown;
}

/**
 * The base of every error the app throws at its edges (store, GitHub, DevBoxes, ECS, judges,
 * runtime): a `code` from its domain's union to branch on, whether retrying may help, and the
 * underlying `cause`. Each adapter maps its SDK's errors to its subclass once, by status, name
 * or header; nothing classifies an error by its message, which is for people.
 */
export class AppError<C extends string = string> extends Error {
  override readonly name: string = "AppError";
  /** What went wrong, in the domain's words, for callers to branch on. */
  readonly code: C;
  /** True when the same work may succeed if tried again later. */
  readonly retryable: boolean;

  constructor(code: C, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.retryable = options.retryable ?? false;
  }
}

/** May the same work succeed if tried again later? Only an {@link AppError} that says so. */
export function isRetryable(error: unknown): boolean {
  return error instanceof AppError && error.retryable;
}
