import type { Idler } from "./task-set.js";

/**
 * Work in order per key: what is queued under a key runs after everything queued under it
 * before (whether that succeeded or failed); different keys run side by side. Work queued with
 * {@link coalesce} while earlier work of its kind waits to start joins it instead.
 */
export class KeyedQueue<K = string> implements Idler {
  readonly #tails = new Map<K, Promise<unknown>>();
  /** Per key, the coalesced work queued and not yet started. */
  readonly #waiting = new Map<K, Promise<void>>();

  /** Runs `work` after everything queued under `key`; settles as it does. */
  run<T>(key: K, work: () => Promise<T>): Promise<T> {
    const next = (this.#tails.get(key) ?? Promise.resolve()).then(work, work);
    this.#tails.set(key, next);
    const forget = () => {
      if (this.#tails.get(key) === next) this.#tails.delete(key);
    };
    next.then(forget, forget);
    return next;
  }

  /**
   * Runs `work` after everything queued under `key`, unless coalesced work of the key waits to
   * start already: then that one run serves both (a burst of requests costs one run after the
   * one under way). With `settle`, the work's turn begins by waiting for it (a debounce), and
   * requests keep joining it until then.
   */
  coalesce(key: K, work: () => Promise<void>, settle?: () => Promise<void>): Promise<void> {
    const waiting = this.#waiting.get(key);
    if (waiting !== undefined) return waiting;
    const start = () => {
      this.#waiting.delete(key);
      return work();
    };
    const queued = this.run(key, settle === undefined ? start : () => settle().then(start, start));
    this.#waiting.set(key, queued);
    return queued;
  }

  /** Does coalesced work of `key` wait to start (queued, or still settling)? */
  waits(key: K): boolean {
    return this.#waiting.has(key);
  }

  /** Is work queued or running under `key`? */
  has(key: K): boolean {
    return this.#tails.has(key);
  }

  /** How many keys have work queued or running. */
  get size(): number {
    return this.#tails.size;
  }

  busy(): boolean {
    return this.#tails.size > 0;
  }

  /** Waits until no work is queued or running under `key` (what is queued meanwhile too). */
  async idleOf(key: K): Promise<void> {
    for (let tail = this.#tails.get(key); tail !== undefined; tail = this.#tails.get(key)) {
      await Promise.allSettled([tail]);
    }
  }

  /** Waits until no work is queued or running under any key. */
  async idle(): Promise<void> {
    while (this.#tails.size > 0) await Promise.allSettled([...this.#tails.values()]);
  }
}
