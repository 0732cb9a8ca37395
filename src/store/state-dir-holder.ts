import { readFileSync, rmSync } from "node:fs";
import { rename, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** What the process holding a state directory says about itself in `<stateDir>/holder.json`. */
export interface HolderInfo {
  /** The holding process. */
  pid: number;
  /** The command it runs (`run`, `resume`, ...). */
  command: string;
  /** Its embedded database, served on 127.0.0.1: other processes read the runs through it. */
  endpoint: string;
  /** The runs it drives, in the order it took them up. */
  runs: string[];
  /** When it took the directory, in ms since the epoch. */
  since: number;
}

const FILE = "holder.json";

/**
 * The note a process holding a state directory (LevelDB allows one) leaves for the others: which
 * process, which runs, and where its database answers, so `status` and `log` read through it
 * instead of failing on the lock, and a second `run` can say who holds the directory.
 */
export class StateDirHolder {
  readonly #path: string;
  #info: HolderInfo;
  #writing: Promise<void> = Promise.resolve();

  private constructor(path: string, info: HolderInfo) {
    this.#path = path;
    this.#info = info;
  }

  /** Writes the note for this process; call once the directory's database is open. */
  static async claim(
    stateDir: string,
    info: Omit<HolderInfo, "pid" | "runs" | "since">,
    now: () => number,
  ): Promise<StateDirHolder> {
    const holder = new StateDirHolder(join(stateDir, FILE), {
      ...info,
      pid: process.pid,
      runs: [],
      since: now(),
    });
    await holder.#write();
    return holder;
  }

  /** The live holder of `stateDir`, or undefined when there is none (or it died). */
  static read(stateDir: string): HolderInfo | undefined {
    let info: HolderInfo;
    try {
      info = JSON.parse(readFileSync(join(stateDir, FILE), "utf8")) as HolderInfo;
    } catch {
      // Missing, or half-written by a process that died: nobody is known to hold it.
      return undefined;
    }
    return Number.isInteger(info.pid) && isRunning(info.pid) ? info : undefined;
  }

  /** Records that this process drives `runId` (once per run). */
  async drives(runId: string): Promise<void> {
    if (this.#info.runs.includes(runId)) return this.#writing;
    this.#info = { ...this.#info, runs: [...this.#info.runs, runId] };
    return this.#write();
  }

  /** Removes the note; synchronous so it also runs on the way out of a signalled process. */
  release(): void {
    rmSync(this.#path, { force: true });
  }

  #write(): Promise<void> {
    const text = `${JSON.stringify(this.#info)}\n`;
    // One write at a time, each whole (write then rename), so a reader never sees half a file.
    this.#writing = this.#writing.then(async () => {
      await writeFile(`${this.#path}.tmp`, text, { mode: 0o600 });
      await rename(`${this.#path}.tmp`, this.#path);
    });
    return this.#writing;
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
