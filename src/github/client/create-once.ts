import { isRetryable } from "../../errors/app-error.js";

/** How many times a create is sent before its failure is final. */
const ATTEMPTS = 3;

/**
 * Octokit's request option that keeps its retry plugin from re-sending a create: GitHub may
 * have done the write and still answered 502, and a blind retry makes a second one.
 */
export const NO_PLUGIN_RETRY = { request: { retries: 0 } } as const;

/**
 * Creates something on GitHub at most once: after a retryable failure, `find` looks for what a
 * failed attempt may have created (a comment by its marker, a check run by its external id)
 * and returns it instead of sending the create again.
 */
export async function createOnce<T>(
  create: () => Promise<T>,
  find: () => Promise<T | undefined>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await create();
    } catch (error) {
      if (!isRetryable(error) || attempt >= ATTEMPTS) throw error;
      const found = await find();
      if (found !== undefined) return found;
    }
  }
}
