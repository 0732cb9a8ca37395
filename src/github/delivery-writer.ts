import { isRetryable } from "../errors/app-error.js";
import type { DeliveryRecord, Store } from "../store/store.js";

/** At most this many deliveries go in one write: one BatchWriteItem. */
const GROUP_MAX = 25;

interface Waiting {
  delivery: DeliveryRecord;
  resolve: (recorded: boolean) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit of webhook deliveries: one write at a time, and the deliveries that arrive
 * while it is in flight go out together in the next (up to 25; see the store's
 * `recordDeliveries` for how a group is deduplicated, a copy within the group included). A
 * quiet intake writes each delivery at once, alone; a busy one shares each write among many.
 * Each delivery's promise settles when its own group is durable.
 */
export class DeliveryWriter {
  #waiting: Waiting[] = [];
  #writing: Promise<void> | undefined;

  /** `onIdle` is called when the writer has nothing left to write. */
  constructor(
    private readonly store: Store,
    private readonly onIdle: () => void = () => undefined,
  ) {}

  /** Is a write in flight (and perhaps deliveries waiting for the next)? */
  get busy(): boolean {
    return this.#writing !== undefined;
  }

  /** Records a delivery in the next group: true when new, false for a known id. */
  write(delivery: DeliveryRecord): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      this.#waiting.push({ delivery, resolve, reject });
      if (this.#writing !== undefined) return; // joins the next group
      this.#writing = this.#writeGroups().finally(() => {
        this.#writing = undefined;
        this.onIdle();
      });
    });
  }

  async #writeGroups(): Promise<void> {
    while (this.#waiting.length > 0) await this.#writeGroup(this.#waiting.splice(0, GROUP_MAX));
  }

  async #writeGroup(group: Waiting[]): Promise<void> {
    try {
      await this.#write(group);
    } catch (error) {
      if (group.length === 1 || isRetryable(error)) {
        for (const waiting of group) waiting.reject(error);
        return;
      }
      // A refused delivery (too large, say) fails only its own record, not the group's.
      for (const waiting of group) await this.#write([waiting]).catch(waiting.reject);
    }
  }

  async #write(group: Waiting[]): Promise<void> {
    const recorded = await this.store.recordDeliveries(group.map((waiting) => waiting.delivery));
    group.forEach((waiting, i) => waiting.resolve(recorded[i] ?? false));
  }
}
