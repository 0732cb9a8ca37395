import { constants, existsSync } from "node:fs";
import { readdir, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { StringDecoder } from "node:string_decoder";
import { DevBoxError } from "../errors.js";
import { openInside } from "./no-follow.js";

/** A new whole line of a DevBox's log. */
export interface DevBoxLogLine {
  devbox: string;
  line: string;
}

/**
 * Follows the logs of one run's local DevBoxes (`<stateDir>/devboxes/<runId>-*\/agent.log`),
 * where each agent writes its own messages and its commands' output, masked, as they run. A
 * DevBox already stopped when following began is skipped; a live one is read from its start.
 */
export class DevBoxLogTail {
  readonly #root: string;
  readonly #prefix: string;
  readonly #offsets = new Map<string, number>();
  readonly #partial = new Map<string, string>();
  /** Per log: a character split between two reads waits for its other bytes. */
  readonly #decoders = new Map<string, StringDecoder>();
  #first = true;

  constructor(stateDir: string, runId: string) {
    this.#root = join(stateDir, "devboxes");
    this.#prefix = `${runId}-`;
  }

  /** The lines written since the last call. */
  async read(): Promise<DevBoxLogLine[]> {
    const lines: DevBoxLogLine[] = [];
    for (const name of await this.#devboxes()) {
      const dir = join(this.#root, name);
      if (!this.#offsets.has(name)) {
        const live = existsSync(join(dir, "pid"));
        this.#offsets.set(name, this.#first && !live ? await sizeOf(dir) : 0);
      }
      const text = await this.#readFrom(name, dir);
      const pieces = `${this.#partial.get(name) ?? ""}${text}`.split("\n");
      this.#partial.set(name, pieces.pop() ?? "");
      const devbox = name.slice(this.#prefix.length);
      for (const line of pieces) lines.push({ devbox, line });
    }
    this.#first = false;
    return lines;
  }

  /** What is left of unfinished lines, once nothing more will be written. */
  flush(): DevBoxLogLine[] {
    const lines = [...this.#partial]
      .filter(([, line]) => line !== "")
      .map(([name, line]) => ({ devbox: name.slice(this.#prefix.length), line }));
    this.#partial.clear();
    return lines;
  }

  async #devboxes(): Promise<string[]> {
    try {
      return (await readdir(this.#root)).filter((name) => name.startsWith(this.#prefix)).sort();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw error;
    }
  }

  async #readFrom(name: string, dir: string): Promise<string> {
    const offset = this.#offsets.get(name) ?? 0;
    const file = await openLog(dir);
    if (file === undefined) return "";
    try {
      const size = (await file.stat()).size;
      if (size <= offset) return "";
      const buffer = Buffer.alloc(size - offset);
      const { bytesRead } = await file.read(buffer, 0, buffer.length, offset);
      this.#offsets.set(name, offset + bytesRead);
      const decoder = this.#decoders.get(name) ?? new StringDecoder("utf8");
      this.#decoders.set(name, decoder);
      return decoder.write(buffer.subarray(0, bytesRead));
    } finally {
      await file.close();
    }
  }
}

/**
 * The DevBox's log, opened without following a link: the agent could have replaced it with one
 * to a host file, whose contents would be shown as its log. Undefined when missing or refused.
 */
async function openLog(dir: string): Promise<FileHandle | undefined> {
  try {
    return await openInside(dir, "agent.log", constants.O_RDONLY);
  } catch (error) {
    if (error instanceof DevBoxError || (error as NodeJS.ErrnoException).code === "ENOENT")
      return undefined;
    throw error;
  }
}

async function sizeOf(dir: string): Promise<number> {
  const file = await openLog(dir);
  try {
    return file === undefined ? 0 : (await file.stat()).size;
  } finally {
    await file?.close();
  }
}
