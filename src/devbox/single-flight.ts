/**
 * At most one piece of work per key at a time: a call while one runs shares its promise. The
 * executors start each DevBox this way, so a duplicated claim starts it once.
 */
export class SingleFlight {
  readonly #running = new Map<string, Promise<void>>();

  /** Runs `work` for `key`, or joins the run already under way. */
  run(key: string, work: () => Promise<void>): Promise<void> {
    const pending = this.#running.get(key);
    if (pending !== undefined) return pending;
    const running = work().finally(() => this.#running.delete(key));
    this.#running.set(key, running);
    return running;
  }

  /** Whether work for `key` is under way. */
  has(key: string): boolean {
    return this.#running.has(key);
  }

  /** Waits for the work under way for `key`, if any, whatever its outcome. */
  async settled(key: string): Promise<void> {
    await this.#running.get(key)?.catch(() => undefined);
  }
}
