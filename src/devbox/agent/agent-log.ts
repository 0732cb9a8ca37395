import { lineMasker, type Mask } from "./secret-mask.js";

/**
 * The agent's log with every secret value masked out: its own messages, and the output of the
 * processes it runs, masked line by line so that a secret split across chunks is caught too.
 */
export class AgentLog {
  readonly #sink: { write(text: string): unknown };
  readonly #lines: { write(chunk: string): string; flush(): string };

  constructor(sink: { write(text: string): unknown }, mask: Mask) {
    this.#sink = sink;
    this.#lines = lineMasker(mask);
  }

  /** Writes one of the agent's own messages, prefixed with `clustercode devbox: `. */
  say(message: string): void {
    this.#sink.write(`clustercode devbox: ${message}\n`);
  }

  /** Writes a chunk of a process's output (its whole lines, masked). */
  readonly tee = (chunk: Buffer): void => {
    this.#sink.write(this.#lines.write(chunk.toString("utf8")));
  };

  /** Flushes the last, unterminated line of a process's output. */
  endOfOutput(): void {
    this.#sink.write(this.#lines.flush());
  }
}
