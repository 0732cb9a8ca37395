/** The exit code of a command stopped by Ctrl-C (128 + SIGINT), as shells report it. */
export const INTERRUPTED_EXIT = 130;

/**
 * Catches Ctrl-C (SIGINT) and SIGTERM for as long as a command drives a run, so the command can
 * stop its DevBoxes and say how to resume instead of dying with them still running. Signals
 * after the first are reported and otherwise ignored while the command winds down.
 */
export class Interruption {
  readonly #stderr: { write(text: string): unknown };
  readonly #onSignal: (signal: NodeJS.Signals) => void;
  #signalled: NodeJS.Signals | undefined;
  #wake: (() => void) | undefined;
  /** Resolves with "interrupted" at the first signal. */
  readonly happened: Promise<"interrupted">;

  constructor(stderr: { write(text: string): unknown }) {
    this.#stderr = stderr;
    this.happened = new Promise((resolve) => (this.#wake = () => resolve("interrupted")));
    this.#onSignal = (signal) => {
      if (this.#signalled !== undefined) {
        this.#stderr.write("clustercode: still stopping the DevBoxes\n");
        return;
      }
      this.#signalled = signal;
      this.#stderr.write(`\nclustercode: ${signal}: stopping the DevBoxes\n`);
      this.#wake?.();
    };
    process.on("SIGINT", this.#onSignal);
    process.on("SIGTERM", this.#onSignal);
  }

  /** Whether a signal came. */
  get signalled(): boolean {
    return this.#signalled !== undefined;
  }

  /** Gives the signals back to their default handling. */
  dispose(): void {
    process.off("SIGINT", this.#onSignal);
    process.off("SIGTERM", this.#onSignal);
  }
}

/** Says how to continue a run whose command was interrupted, and returns its exit code. */
export function interruptedExit(stderr: { write(text: string): unknown }, runId: string): number {
  stderr.write(
    `run ${runId}: interrupted; its DevBoxes are stopped. Continue it with: clustercode resume ${runId}\n`,
  );
  return INTERRUPTED_EXIT;
}
