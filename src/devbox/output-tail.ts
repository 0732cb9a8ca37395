/** Keeps the last `limit` bytes of a stream of chunks (command output is bounded this way). */
export class OutputTail {
  readonly #limit: number;
  #chunks: Buffer[] = [];
  #size = 0;
  #dropped = false;

  constructor(limit: number) {
    this.#limit = limit;
  }

  /** Appends a chunk, forgetting the oldest bytes beyond the limit. */
  push(chunk: Buffer | string): void {
    const buffer = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk;
    this.#chunks.push(buffer);
    this.#size += buffer.length;
    while (this.#chunks.length > 1 && this.#size - (this.#chunks[0]?.length ?? 0) >= this.#limit) {
      this.#size -= this.#chunks.shift()?.length ?? 0;
      this.#dropped = true;
    }
  }

  /** Whether anything was forgotten. */
  get truncated(): boolean {
    return this.#dropped || this.#size > this.#limit;
  }

  /** The kept bytes as UTF-8, starting at a character boundary. */
  text(): string {
    let buffer = Buffer.concat(this.#chunks);
    if (buffer.length > this.#limit) buffer = buffer.subarray(buffer.length - this.#limit);
    let start = 0;
    // Skip UTF-8 continuation bytes (10xxxxxx) left over from a character cut in half.
    if (this.truncated) {
      while (start < buffer.length && start < 4 && ((buffer[start] ?? 0) & 0xc0) === 0x80) start++;
    }
    return buffer.subarray(start).toString("utf8");
  }
}
