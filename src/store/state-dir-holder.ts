import { readdirSync, readFileSync, rmSync } from "node:fs";
import { mkdir, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** What a process driving runs of a state directory says about itself. */
export interface HolderInfo {
  /** The process. */
  pid: number;
  /** The command it runs (`run`, `ui`, `approve`, ...). */
  command: string;
  /** The runs it drives, in the order it took them up. */
  runs: string[];
  /** When it took the directory, in ms since the epoch. */
  since: number;
}

const FOLDER = "holders";

/**
 * The note each process driving runs of a state directory leaves for the others, in
 * `<stateDir>/holders/<pid>.json`: which process and which runs, so `status` and `log` tell a
 * run some live process drives from one whose process stopped.
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
    await mkdir(join(stateDir, FOLDER), { recursive: true });
    const holder = new StateDirHolder(join(stateDir, FOLDER, `${process.pid}.json`), {
      ...info,
      pid: process.pid,
      runs: [],
      since: now(),
    });
    await holder.#write();
    return holder;
  }

  /** The live processes driving runs of `stateDir` (the notes of dead ones mean nothing). */
  static live(stateDir: string): HolderInfo[] {
    let names: string[];
    try {
      names = readdirSync(join(stateDir, FOLDER));
    } catch {
      return [];
    }
    return names
      .filter((name) => name.endsWith(".json"))
      .flatMap((name) => {
        try {
          const info = JSON.parse(readFileSync(join(stateDir, FOLDER, name), "utf8")) as HolderInfo;
          return Number.isInteger(info.pid) && isRunning(info.pid) ? [info] : [];
        } catch {
          // Half-written (its temporary file), or removed meanwhile: nobody is known by it.
          return [];
        }
      });
  }

  /** The live process that drives `runId`, if one does. */
  static driverOf(stateDir: string, runId: string): HolderInfo | undefined {
    return StateDirHolder.live(stateDir).find((holder) => holder.runs.includes(runId));
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
