import type { Store } from "../store/store.js";
import type { Runtime } from "./runtime.js";

/**
 * Fires due timers: finds them through the store's due-time index, claims each (so exactly one
 * process fires it, however many run) and delivers `timer.fired`.
 */
export class TimerPump {
  #interval: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;

  constructor(
    private readonly deps: {
      store: Store;
      runtime: Runtime;
      now: () => number;
      intervalMs?: number;
      onError?: (error: unknown) => void;
    },
  ) {}

  start(): void {
    this.#interval = setInterval(
      () => void this.tick().catch((error: unknown) => this.deps.onError?.(error)),
      this.deps.intervalMs ?? 500,
    );
    this.#interval.unref();
  }

  /** Fires every timer due now. Overlapping calls share one pass. */
  tick(): Promise<void> {
    this.#running ??= this.#fire().finally(() => (this.#running = undefined));
    return this.#running;
  }

  async #fire(): Promise<void> {
    const { store, runtime, now } = this.deps;
    for (const timer of await store.dueTimers(now())) {
      if (!(await store.claimTimer(timer))) continue;
      await runtime.deliver(timer.runId, {
        type: "timer.fired",
        timerId: timer.timerId,
        at: now(),
      });
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.#interval);
    await this.#running;
  }
}
