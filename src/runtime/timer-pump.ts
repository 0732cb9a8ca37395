import type { Store } from "../store/store.js";
import type { RunDriver } from "./ports.js";

/**
 * Fires due timers: finds them through the store's due-time index, delivers `timer.fired`, then
 * deletes the timer. However many processes do this at once, the run's version condition and
 * the engine (which refuses a timer it no longer holds) let it fire once.
 */
export class TimerPump {
  #interval: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;

  constructor(
    private readonly deps: {
      store: Store;
      runtime: RunDriver;
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
      // Deliver first, then delete: a crash in between fires the timer again, and the engine
      // refuses a timer it no longer holds, so a timer is never lost and never fires twice.
      await runtime.deliver(timer.runId, {
        type: "timer.fired",
        timerId: timer.timerId,
        at: now(),
      });
      await store.claimTimer(timer);
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.#interval);
    await this.#running;
  }
}
