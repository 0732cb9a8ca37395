import { isRetryable } from "../../errors/app-error.js";
import type { DeliveryRecord, Store } from "../../store/store.js";

/** At most this many deliveries go in one write: one BatchWriteItem. */
const GROUP_MAX = 25;
/** Writes in flight at most: more than one only for full groups, when deliveries pile up. */
const WRITES = 4;

interface Waiting {
  delivery: DeliveryRecord;
  resolve: (recorded: boolean) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit of webhook deliveries: the deliveries that arrive while a write is in flight go
 * out together in the next (up to 25; see the store's `recordDeliveries` for how a group is
 * deduplicated, a copy within the group included). A quiet intake writes each delivery at
 * once, alone; a busy one shares each write among many, and when a full group waits, writes
 * it alongside (up to four writes), so that the wait stays short at a high rate. Each
 * delivery's promise settles when its own group is durable. A copy of a delivery whose record
 * is under way waits for it, and is the duplicate once it landed.
 */
export class DeliveryWriter {
  #waiting: Waiting[] = [];
  #writes = 0;
  /** The records under way, by delivery id. */
  readonly #underWay = new Map<string, Promise<boolean>>();

  /** `onIdle` is called when the writer has nothing left to write. */
  constructor(
    private readonly store: Store,
    private readonly onIdle: () => void = () => undefined,
  ) {}

  /** Is a write in flight (and perhaps deliveries waiting for the next)? */
  get busy(): boolean {
    return this.#writes > 0;
  }

  /** Records a delivery in the next group: true when new, false for a known id. */
  write(delivery: DeliveryRecord): Promise<boolean> {
    const { deliveryId } = delivery;
    const earlier = this.#underWay.get(deliveryId);
    if (earlier !== undefined)
      return earlier.then(
        () => false,
        () => this.write(delivery),
      );
    const written = new Promise<boolean>((resolve, reject) => {
      this.#waiting.push({ delivery, resolve, reject });
      const full = this.#waiting.length >= GROUP_MAX;
      if (this.#writes === 0 || (full && this.#writes < WRITES)) void this.#writeGroups();
    });
    this.#underWay.set(deliveryId, written);
    const settled = () => this.#underWay.delete(deliveryId);
    written.then(settled, settled);
    return written;
  }

  async #writeGroups(): Promise<void> {
    this.#writes++;
    try {
      while (this.#waiting.length > 0) await this.#writeGroup(this.#waiting.splice(0, GROUP_MAX));
    } finally {
      if (--this.#writes === 0) this.onIdle();
    }
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
