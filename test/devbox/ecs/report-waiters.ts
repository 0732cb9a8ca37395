/**
 * Wakes waiters whenever the executor reports a status or a loss. Placement retries run in the
 * background on timers; waiting for what they report (not for a fixed time) keeps the tests
 * right on a loaded machine, where one retry's round trip may take a second.
 */
export class ReportWaiters {
  readonly #waiters = new Set<() => void>();

  /** Re-checks every waiter. */
  notify(): void {
    for (const wake of [...this.#waiters]) wake();
  }

  /** Resolves once `check` holds, looking again at each notice. */
  until(check: () => boolean): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        if (!check()) return;
        this.#waiters.delete(wake);
        resolve();
      };
      this.#waiters.add(wake);
      wake();
    });
  }
}
