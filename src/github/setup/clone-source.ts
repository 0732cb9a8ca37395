import { DevBoxError } from "../../devbox/errors.js";
import type { DevBoxExecutor, StartRequest } from "../../devbox/executor.js";
import type { LocalExecutor } from "../../devbox/local/executor.js";

const CREDENTIALS = /\/\/[^/@\s]*:[^/@\s]*@/g;

/** Replaces the credentials of every `https://user:secret@host` URL in `text`. */
export function scrubCredentials(text: string): string {
  return text.replace(CREDENTIALS, "//***@");
}

/**
 * Starts DevBoxes on a local executor, keeping the installation token in the clone URL out of
 * errors: a failed clone's message names the URL, so it is rethrown scrubbed (without the
 * original as its cause, which holds the token too).
 */
export class TokenScrubbingExecutor implements DevBoxExecutor {
  constructor(private readonly inner: Pick<LocalExecutor, "start" | "stop" | "reap" | "stopAll">) {}

  /** Starts the DevBox; a failure comes back with credentials scrubbed from its message. */
  async start(request: StartRequest): Promise<void> {
    try {
      await this.inner.start(request);
    } catch (error) {
      if (error instanceof DevBoxError) {
        throw new DevBoxError(error.code, scrubCredentials(error.message), {
          retryable: error.retryable,
        });
      }
      throw error instanceof Error ? new Error(scrubCredentials(error.message)) : error;
    }
  }

  /** Stops the DevBox. */
  stop(devboxId: string): Promise<void> {
    return this.inner.stop(devboxId);
  }

  /** Stops DevBoxes a crashed process left running. */
  async reap(): Promise<void> {
    await this.inner.reap();
  }

  /** Stops every DevBox this process started. */
  stopAll(): Promise<void> {
    return this.inner.stopAll();
  }
}
