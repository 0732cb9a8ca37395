import type { Effect, RunSnapshot } from "../engine/model.js";
import type { RunDocument } from "../runtime/runtime.js";
import type { CommandIo } from "./command.js";
import { DevBoxLogTail } from "../devbox/local/log-tail.js";
import { EvidenceNarrator } from "./evidence-narrator.js";
import { terminalText } from "./terminal-text.js";
import type { RUN_FORMATS } from "./run-output.js";

/** How often a run's DevBox output is looked at while the run goes. */
const LOOK_MS = 200;

/** How a command driving a run prints it. */
export interface LiveOutputOptions {
  io: CommandIo;
  stateDir: string;
  format: (typeof RUN_FORMATS)[number];
  /** One line per command, without the commands' output. */
  quiet: boolean;
}

/**
 * Prints a run as it goes: the narrated evidence of each transition and, unless quiet, each
 * command's output as it comes, each line prefixed by the node running it (`[build] ...`) or the
 * prototype variant (`[design/v2] ...`), as act prefixes its jobs. Output read before a
 * transition is printed before that transition's lines, so a command's output comes before the
 * line that says it finished.
 */
export class LiveOutput {
  readonly #options: LiveOutputOptions;
  readonly #narrator = new EvidenceNarrator();
  readonly #labels = new Map<string, string>();
  #tail: DevBoxLogTail | undefined;
  #printing: Promise<void> = Promise.resolve();
  #looking: NodeJS.Timeout | undefined;

  constructor(options: LiveOutputOptions) {
    this.#options = options;
  }

  /** The transition listener to hand the host. */
  readonly onTransition = (run: RunDocument, effects: Effect[]): void => {
    if (this.#options.format !== "human") return;
    const state = run.state;
    this.#learn(state);
    this.#tail ??= new DevBoxLogTail(this.#options.stateDir, state.runId);
    this.#looking ??= this.#options.quiet
      ? undefined
      : setInterval(() => this.#then(() => this.#drain()), LOOK_MS);
    const lines = effects.flatMap((effect) =>
      effect.type === "evidence" ? this.#narrator.lines(effect.entry) : [],
    );
    this.#then(async () => {
      await this.#drain();
      for (const line of lines) this.#options.io.stdout.write(`${line}\n`);
    });
  };

  /** Prints what is left and stops looking. */
  async stop(): Promise<void> {
    clearInterval(this.#looking);
    this.#then(async () => {
      await this.#drain();
      if (!this.#options.quiet) this.#write(this.#tail?.flush() ?? []);
    });
    await this.#printing;
  }

  #then(print: () => Promise<void>): void {
    // Output is best effort: a log that cannot be read never stops the run.
    this.#printing = this.#printing.then(print).catch(() => {});
  }

  async #drain(): Promise<void> {
    if (this.#options.quiet || this.#tail === undefined) return;
    this.#write(await this.#tail.read());
  }

  #write(lines: { devbox: string; line: string }[]): void {
    for (const { devbox, line } of lines) {
      const label = this.#labels.get(devbox) ?? devbox;
      this.#options.io.stdout.write(`[${label}] ${terminalText(line)}\n`);
    }
  }

  /** Which node (or variant) each of the run's DevBoxes works for now. */
  #learn(state: RunSnapshot): void {
    const active = state.active;
    if (active === undefined) return;
    if (state.devbox !== undefined) this.#labels.set(state.devbox.id, active.node);
    if (active.progress.kind !== "prototype") return;
    for (const variant of active.progress.variants) {
      this.#labels.set(variant.devbox.id, `${active.node}/v${variant.index + 1}`);
    }
  }
}
