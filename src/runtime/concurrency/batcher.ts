import { isRetryable } from "../../errors/app-error.js";
import { TaskSet, type Idler } from "./task-set.js";

/** How a {@link Batcher} groups its items and writes them. */
export interface BatcherOptions<T, R> {
  /** Writes a group; answers one result per item, in order. */
  write(items: T[]): Promise<readonly R[]>;
  /** A group is written once it weighs this much (see `weight`)... */
  full: number;
  /** ...or this long after its first item; 0: an item that finds no write in flight goes at once. */
  windowMs: number;
  /** What an item weighs towards `full` (records it holds, say); default 1. */
  weight?: (item: T) => number;
  /** Items in one write at most; default: everything waiting. */
  most?: number;
  /** Writes in flight at most: more than one only while full groups wait; default 1. */
  writes?: number;
  /** Lets the process exit while a group waits for its window (its owner writes it on close). */
  unref?: boolean;
  /** Told when the last write in flight ended. */
  onIdle?: () => void;
}

interface Waiting<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: items that arrive while a write is in flight go out together in the next write,
 * which starts once the group is full or its window has passed. Each item's promise settles when
 * its own group is written. A group the store refuses for good (not retryably) is written again
 * item by item, so that a refused item fails only itself.
 */
export class Batcher<T, R> implements Idler {
  #queue: Waiting<T, R>[] = [];
  #weight = 0;
  #writes = 0;
  #window: NodeJS.Timeout | undefined;
  readonly #drains = new TaskSet();

  constructor(private readonly options: BatcherOptions<T, R>) {}

  /** Queues `item` for the next group; settles with its result once that group is written. */
  add(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.#queue.push({ item, resolve, reject });
      this.#weight += this.options.weight?.(item) ?? 1;
      this.#schedule();
    });
  }

  /** Is a write in flight? */
  get writing(): boolean {
    return this.#writes > 0;
  }

  /** Is a write in flight, or are items waiting? */
  busy(): boolean {
    return this.#writes > 0 || this.#queue.length > 0;
  }

  /** Writes what waits now, without its window, and waits until everything queued is written. */
  async idle(): Promise<void> {
    while (this.busy()) {
      if (this.#writes === 0) this.#start();
      await this.#drains.idle();
    }
  }

  #schedule(): void {
    const full = this.#weight >= this.options.full;
    if (this.#writes === 0) {
      if (full || this.options.windowMs === 0) this.#start();
      else if (this.#window === undefined) {
        this.#window = setTimeout(() => this.#start(), this.options.windowMs);
        if (this.options.unref === true) this.#window.unref();
      }
    } else if (full && this.#writes < (this.options.writes ?? 1)) this.#start();
  }

  #start(): void {
    clearTimeout(this.#window);
    this.#window = undefined;
    this.#writes++;
    void this.#drains.add(this.#drain());
  }

  /** Writes groups while they are ready; a group not yet full waits for its window. */
  async #drain(): Promise<void> {
    try {
      do await this.#writeGroup(this.#take());
      while (
        this.#queue.length > 0 &&
        (this.options.windowMs === 0 || this.#weight >= this.options.full)
      );
    } finally {
      if (--this.#writes === 0) {
        if (this.#queue.length > 0) this.#schedule();
        else this.options.onIdle?.();
      }
    }
  }

  #take(): Waiting<T, R>[] {
    const group = this.#queue.splice(0, this.options.most ?? this.#queue.length);
    const weigh = (item: T) => this.options.weight?.(item) ?? 1;
    this.#weight -= group.reduce((sum, waiting) => sum + weigh(waiting.item), 0);
    return group;
  }

  async #writeGroup(group: Waiting<T, R>[]): Promise<void> {
    try {
      await this.#write(group);
    } catch (error) {
      if (group.length === 1 || isRetryable(error)) {
        for (const waiting of group) waiting.reject(error);
        return;
      }
      for (const waiting of group) await this.#write([waiting]).catch(waiting.reject);
    }
  }

  async #write(group: Waiting<T, R>[]): Promise<void> {
    const results = await this.options.write(group.map((waiting) => waiting.item));
    group.forEach((waiting, i) => waiting.resolve(results[i] as R));
  }
}
