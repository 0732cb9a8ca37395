import { rmSync, writeFileSync } from "node:fs";
import { open, readFile } from "node:fs/promises";
import { join } from "node:path";
import type { CommandResult } from "../../engine/commands.js";
import { commandResultSchema } from "../protocol.js";

/** The journal of command ids, inside the checkout's git directory (never committed). */
export const JOURNAL_FILE = "clustercode-commands";
/** The command running now and its process group, for whoever must kill it after the agent. */
export const RUNNING_FILE = "clustercode-running";

/** What the journal knows about a command id. */
export type JournalEntry = { state: "started" } | { state: "finished"; result: CommandResult };

/** The process group of the command running in a checkout, as the agent recorded it. */
export interface RunningCommand {
  commandId: string;
  pid: number;
}

/**
 * Which commands this checkout has started and how they ended, so that a redelivered command is
 * never run twice, even by a new agent in the same checkout. One JSON line per event, each
 * flushed to disk before the command it announces starts.
 */
export class CommandJournal {
  readonly #gitDir: string;
  readonly #entries: Map<string, JournalEntry>;

  private constructor(gitDir: string, entries: Map<string, JournalEntry>) {
    this.#gitDir = gitDir;
    this.#entries = entries;
  }

  /** Loads the journal of the checkout whose git directory is `gitDir`. */
  static async open(gitDir: string): Promise<CommandJournal> {
    const entries = new Map<string, JournalEntry>();
    let text = "";
    try {
      text = await readFile(join(gitDir, JOURNAL_FILE), "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
    for (const line of text.split("\n")) {
      const entry = parseLine(line);
      if (entry !== undefined) entries.set(entry.commandId, entry.entry);
    }
    return new CommandJournal(gitDir, entries);
  }

  /** What is known about `commandId`, if anything. */
  lookup(commandId: string): JournalEntry | undefined {
    return this.#entries.get(commandId);
  }

  /** Records that `commandId` is about to start; durable when the promise resolves. */
  async markStarted(commandId: string): Promise<void> {
    await this.#append({ commandId, state: "started" });
    this.#entries.set(commandId, { state: "started" });
  }

  /** Records how a command ended, so a redelivery reports the same result. */
  async markFinished(result: CommandResult): Promise<void> {
    await this.#append({ commandId: result.commandId, state: "finished", result });
    this.#entries.set(result.commandId, { state: "finished", result });
  }

  /**
   * Records the process group of the running command (read by the executor's `stop`, which must
   * kill it when the agent itself was killed). Synchronous so it cannot land after
   * {@link clearRunning} of a command that ended at once.
   */
  setRunning(running: RunningCommand): void {
    writeFileSync(join(this.#gitDir, RUNNING_FILE), JSON.stringify(running), { mode: 0o600 });
  }

  /** Forgets the running command. */
  clearRunning(): void {
    rmSync(join(this.#gitDir, RUNNING_FILE), { force: true });
  }

  async #append(record: object): Promise<void> {
    const file = await open(join(this.#gitDir, JOURNAL_FILE), "a", 0o600);
    try {
      await file.appendFile(`${JSON.stringify(record)}\n`);
      await file.datasync();
    } finally {
      await file.close();
    }
  }
}

/** Reads the running-command file of a checkout's git directory; undefined when there is none. */
export async function readRunningCommand(gitDir: string): Promise<RunningCommand | undefined> {
  let text: string;
  try {
    text = await readFile(join(gitDir, RUNNING_FILE), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  const value = parseJson(text) as { commandId?: unknown; pid?: unknown } | undefined;
  const { commandId, pid } = value ?? {};
  return typeof commandId === "string" &&
    typeof pid === "number" &&
    Number.isInteger(pid) &&
    pid > 0
    ? { commandId, pid }
    : undefined;
}

function parseLine(line: string): { commandId: string; entry: JournalEntry } | undefined {
  // A torn last line (the agent died while writing) is skipped: its command never started.
  const value = parseJson(line) as
    { commandId?: unknown; state?: unknown; result?: unknown } | undefined;
  if (typeof value?.commandId !== "string") return undefined;
  if (value.state === "started") return { commandId: value.commandId, entry: { state: "started" } };
  const result = commandResultSchema.safeParse(value.result);
  if (value.state === "finished" && result.success) {
    return { commandId: value.commandId, entry: { state: "finished", result: result.data } };
  }
  return undefined;
}

function parseJson(text: string): unknown {
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    if (error instanceof SyntaxError) return undefined;
    throw error;
  }
}

/** What a redelivered command that an earlier agent started but never finished reports. */
export function interruptedResult(commandId: string): CommandResult {
  return {
    commandId,
    exitCode: 125,
    output:
      `clustercode: command ${commandId} was already started in this checkout by an agent that ` +
      `stopped before it finished; its outcome is unknown, so it was not run again\n`,
    durationMs: 0,
    interrupted: true,
  };
}
