import type { SecretMask } from "./secret-mask.js";

/**
 * The agent's log: its own messages with every secret value masked out, and the output of the
 * processes it runs, which comes masked already (see `MaskedStreams`).
 */
export class AgentLog {
  readonly #sink: { write(text: string): unknown };
  readonly #mask: SecretMask;

  constructor(sink: { write(text: string): unknown }, mask: SecretMask) {
    this.#sink = sink;
    this.#mask = mask;
  }

  /** Writes one of the agent's own messages, prefixed with `clustercode devbox: `. */
  say(message: string): void {
    this.#sink.write(`clustercode devbox: ${this.#mask.text(message)}\n`);
  }

  /** Writes masked output of a process as it can be shown. */
  readonly tee = (text: string): void => {
    this.#sink.write(text);
  };
}
