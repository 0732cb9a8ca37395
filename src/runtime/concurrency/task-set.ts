/** Something that can say it has work under way, and wait until it has none. */
export interface Idler {
  busy(): boolean;
  idle(): Promise<void>;
}

/**
 * Tasks started in the background and not yet settled, so that someone can wait for them
 * (tests, shutdown): a task that starts another while it runs is waited for too.
 */
export class TaskSet implements Idler {
  readonly #tasks = new Set<Promise<unknown>>();

  /** How many tasks are under way. */
  get size(): number {
    return this.#tasks.size;
  }

  /** Keeps `task` until it settles; returns it. */
  add<T>(task: Promise<T>): Promise<T> {
    this.#tasks.add(task);
    const forget = () => this.#tasks.delete(task);
    task.then(forget, forget);
    return task;
  }

  busy(): boolean {
    return this.#tasks.size > 0;
  }

  /** Waits until no task is under way, whether it succeeded or failed. */
  async idle(): Promise<void> {
    while (this.#tasks.size > 0) await Promise.allSettled([...this.#tasks]);
  }
}

/**
 * Waits until none of `parts` is busy: the work of one (a transition) may give another work
 * (its records, a queue's drain), so each is waited for again until all are quiet at once.
 */
export async function idleAll(parts: readonly Idler[]): Promise<void> {
  do {
    for (const part of parts) await part.idle();
  } while (parts.some((part) => part.busy()));
}
