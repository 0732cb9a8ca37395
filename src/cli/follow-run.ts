import { setTimeout as sleep } from "node:timers/promises";
import { isSettled } from "../runtime/runtime.js";
import { StateDirHolder } from "../store/state-dir-holder.js";
import { openStore } from "../store/embedded.js";
import type { Store } from "../store/store.js";
import type { CommandIo } from "./command.js";
import { DevBoxLogTail, type DevBoxLogLine } from "../devbox/local/log-tail.js";
import { EvidenceNarrator, renderRecord } from "./evidence-narrator.js";
import { exitCodeOf, type RUN_FORMATS } from "./run-output.js";
import { RunRepository } from "../store/run-repository.js";
import { terminalJson, terminalText } from "./terminal-text.js";

/** How often a follower looks for new evidence and output. */
const POLL_MS = 250;

/** What `clustercode log --follow` follows, and where it writes. */
export interface FollowOptions {
  stateDir: string;
  runId: string;
  io: CommandIo;
  format: (typeof RUN_FORMATS)[number];
}

/**
 * Prints a run's evidence and then, while a process drives it, its new evidence and its
 * DevBoxes' output as they come. Ends with the run's exit code once it finishes or waits on
 * people; when no process drives it (any more), says how to resume it and exits 1.
 */
export async function followRun(options: FollowOptions): Promise<number> {
  const opened = await openStore({
    stateDir: options.stateDir,
    settings: options.io.settings.store,
  });
  try {
    return await new Follower(options).follow(opened.store);
  } finally {
    await opened.close();
  }
}

class Follower {
  readonly #options: FollowOptions;
  readonly #narrator = new EvidenceNarrator();
  readonly #logs: DevBoxLogTail;
  #seen = 0;

  constructor(options: FollowOptions) {
    this.#options = options;
    this.#logs = new DevBoxLogTail(options.stateDir, options.runId);
  }

  async follow(store: Store): Promise<number> {
    const { io, runId, stateDir } = this.#options;
    for (;;) {
      const state = await this.#catchUp(store);
      if (state === undefined) {
        io.stderr.write(`clustercode log: no run ${runId} in this state directory\n`);
        return 2;
      }
      if (isSettled(state)) {
        this.#print(this.#logs.flush());
        return exitCodeOf(state);
      }
      if (StateDirHolder.driverOf(stateDir, runId) === undefined) {
        this.#print(this.#logs.flush());
        io.stderr.write(
          `clustercode log: no process is driving run ${runId}; continue it with: clustercode resume ${runId}\n`,
        );
        return 1;
      }
      await sleep(POLL_MS);
    }
  }

  /** Prints what is new and returns where the run stands. */
  async #catchUp(store: Store) {
    const { runId, io, format } = this.#options;
    const runs = new RunRepository(store);
    const run = await runs.get(runId);
    if (run === undefined) return undefined;
    // Output first: what a command printed came before the evidence of its end.
    this.#print(await this.#logs.read());
    // The last transition's evidence is in the run's outbox before it reaches the log.
    const { document, outbox } = run;
    const pending = outbox.flatMap((effect) =>
      effect.type === "evidence" ? [{ seq: effect.evidenceSeq, entry: effect.entry }] : [],
    );
    for (const record of [...(await runs.evidence(runId)), ...pending]) {
      if (record.seq <= this.#seen) continue;
      this.#seen = record.seq;
      io.stdout.write(renderRecord(record, this.#narrator, format));
    }
    return document.state;
  }

  #print(lines: DevBoxLogLine[]): void {
    this.#options.io.stdout.write(outputLines(lines, this.#options.format));
  }
}

/**
 * DevBox output as `log --follow` prints it: a JSON line each (JSON escapes control characters),
 * or indented lines made safe for a terminal.
 */
export function outputLines(lines: DevBoxLogLine[], format: (typeof RUN_FORMATS)[number]): string {
  return lines
    .map(({ devbox, line }) =>
      format === "json"
        ? `${terminalJson({ devbox, output: line })}\n`
        : `      │ ${terminalText(line)}\n`,
    )
    .join("");
}
