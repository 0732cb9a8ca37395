import type { DeliveryRecord, Store } from "../../store/store.js";
import { Batcher } from "../../runtime/concurrency/batcher.js";

/** At most this many deliveries go in one write: one BatchWriteItem. */
const GROUP_MAX = 25;
/** Writes in flight at most: more than one only for full groups, when deliveries pile up. */
const WRITES = 4;

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
  readonly #batcher: Batcher<DeliveryRecord, boolean>;
  /** The records under way, by delivery id. */
  readonly #underWay = new Map<string, Promise<boolean>>();

  /** `onIdle` is called when the writer has nothing left to write. */
  constructor(store: Store, onIdle: () => void = () => undefined) {
    this.#batcher = new Batcher({
      full: GROUP_MAX,
      most: GROUP_MAX,
      windowMs: 0,
      writes: WRITES,
      write: async (group) => {
        const recorded = await store.recordDeliveries(group);
        return group.map((_, i) => recorded[i] ?? false);
      },
      onIdle,
    });
  }

  /** Is a write in flight (and perhaps deliveries waiting for the next)? */
  get busy(): boolean {
    return this.#batcher.writing;
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
    const written = this.#batcher.add(delivery);
    this.#underWay.set(deliveryId, written);
    const settled = () => this.#underWay.delete(deliveryId);
    written.then(settled, settled);
    return written;
  }
}
