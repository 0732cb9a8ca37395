import { setTimeout as sleep } from "node:timers/promises";
import { isSettled } from "../runtime/runtime.js";
import { StateDirHolder } from "../store/state-dir-holder.js";
import type { StateDirReader } from "../store/state-dir-reader.js";
import { StoreError } from "../store/store-error.js";
import { readStateDir } from "./busy-state-dir.js";
import type { CommandIo } from "./command.js";
import { DevBoxLogTail, type DevBoxLogLine } from "../devbox/local/log-tail.js";
import { EvidenceNarrator, renderRecord } from "./evidence-narrator.js";
import { exitCodeOf, type RUN_FORMATS } from "./run-output.js";
import { RunRepository } from "../store/run-repository.js";

/** How often a follower looks for new evidence and output. */
const POLL_MS = 250;

/** What `clustercode log --follow` follows, and where it writes. */
export interface FollowOptions {
  stateDir: string;
  runId: string;
  io: CommandIo;
  format: (typeof RUN_FORMATS)[number];
}

/** Why one pass over an open store ended. */
type PassEnd = { exit: number } | "holder-gone";

/**
 * Prints a run's evidence and then, while the process driving it lives, its new evidence and its
 * DevBoxes' output as they come. Ends with the run's exit code once it finishes or waits on
 * people; when no process drives it (any more), says how to resume it and exits 1.
 */
export async function followRun(options: FollowOptions): Promise<number> {
  const follower = new Follower(options);
  for (let pass = 0; ; pass++) {
    const reader = await readStateDir(options.stateDir, options.io.env);
    try {
      const end = await follower.pass(reader, pass === 0);
      if (end !== "holder-gone") return end.exit;
    } finally {
      await reader.close();
    }
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

  async pass(reader: StateDirReader, first: boolean): Promise<PassEnd> {
    const { io, runId } = this.#options;
    for (;;) {
      let state;
      try {
        state = await this.#catchUp(reader);
      } catch (error) {
        // The holder ended between two looks: read the rest from the directory itself.
        if (
          error instanceof StoreError &&
          reader.holder !== undefined &&
          !this.#holderLives(reader)
        )
          return "holder-gone";
        throw error;
      }
      if (state === undefined) {
        if (!first) throw new Error(`run ${runId} disappeared from the store`);
        io.stderr.write(`clustercode log: no run ${runId} in this state directory\n`);
        return { exit: 2 };
      }
      if (isSettled(state)) {
        this.#print(this.#logs.flush());
        return { exit: exitCodeOf(state) };
      }
      if (reader.holder?.runs.includes(runId) !== true) {
        this.#print(this.#logs.flush());
        io.stderr.write(
          `clustercode log: no process is driving run ${runId}; continue it with: clustercode resume ${runId}\n`,
        );
        return { exit: 1 };
      }
      await sleep(POLL_MS);
      if (!this.#holderLives(reader)) return "holder-gone";
    }
  }

  /** Prints what is new and returns where the run stands. */
  async #catchUp(reader: StateDirReader) {
    const { runId, io, format } = this.#options;
    const runs = new RunRepository(reader.store);
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
    const { io, format } = this.#options;
    for (const { devbox, line } of lines) {
      io.stdout.write(
        format === "json" ? `${JSON.stringify({ devbox, output: line })}\n` : `      │ ${line}\n`,
      );
    }
  }

  #holderLives(reader: StateDirReader): boolean {
    return StateDirHolder.read(this.#options.stateDir)?.pid === reader.holder?.pid;
  }
}
