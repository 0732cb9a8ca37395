import { existsSync } from "node:fs";
import { open, readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { StringDecoder } from "node:string_decoder";

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
      const log = join(this.#root, name, "agent.log");
      if (!this.#offsets.has(name)) {
        const live = existsSync(join(this.#root, name, "pid"));
        this.#offsets.set(name, this.#first && !live ? await sizeOf(log) : 0);
      }
      const text = await this.#readFrom(name, log);
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

  async #readFrom(name: string, path: string): Promise<string> {
    const offset = this.#offsets.get(name) ?? 0;
    const size = await sizeOf(path);
    if (size <= offset) return "";
    const file = await open(path, "r");
    try {
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

async function sizeOf(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return 0;
    throw error;
  }
}
