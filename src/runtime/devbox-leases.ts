import type { Store } from "../store/store.js";

/** How long a DevBox's lease lasts unless renewed (it is renewed every third of that). */
export const DEVBOX_LEASE_MS = 15_000;

/** Which process owns which DevBox, as the effects and recovery ask it. */
export interface DevBoxOwnership {
  /** How long after its owner is gone a DevBox may be found out (recovery looks again then). */
  readonly ms: number;
  /** Takes (or keeps) DevBox `id`; false while another live process owns it. */
  take(id: string): Promise<boolean>;
  /** Gives DevBox `id` up. */
  release(id: string): Promise<void>;
  /** Keeps the DevBoxes `live` lists; one another process took meanwhile goes to `lost`. */
  start(live: () => string[], lost: (id: string) => void, onError: (error: unknown) => void): void;
  /** Stops keeping them. */
  stop(): Promise<void>;
}

/** What {@link DevBoxLeases} works with. */
export interface DevBoxLeaseDeps {
  store: Store;
  /** This process, as leases name their holder. */
  holder: string;
  now: () => number;
  /** Lease length; default {@link DEVBOX_LEASE_MS}. */
  ms?: number;
}

/**
 * Which replica owns which DevBox, in the store: one lease per DevBox (global id), taken with a
 * conditional write before the DevBox starts and renewed while it runs. Another replica may
 * declare a DevBox lost, or start it, only once the lease has lapsed: its owner is gone.
 */
export class DevBoxLeases implements DevBoxOwnership {
  readonly ms: number;
  #renewal: NodeJS.Timeout | undefined;
  #renewing: Promise<void> = Promise.resolve();

  constructor(private readonly deps: DevBoxLeaseDeps) {
    this.ms = deps.ms ?? DEVBOX_LEASE_MS;
  }

  /** Takes (or renews) DevBox `id`'s lease; false while another live replica holds it. */
  take(id: string): Promise<boolean> {
    const { store, holder, now } = this.deps;
    return store.acquireLease(leaseName(id), holder, now(), this.ms);
  }

  /** Gives DevBox `id`'s lease up (released or lost: nobody owns it now). */
  release(id: string): Promise<void> {
    return this.deps.store.releaseLease(leaseName(id), this.deps.holder);
  }

  /**
   * Renews the leases of the DevBoxes `live` lists every third of a lease; each one another
   * replica took meanwhile (this one was too slow, and it was declared lost) goes to `lost`.
   */
  start(live: () => string[], lost: (id: string) => void, onError: (error: unknown) => void) {
    this.#renewal ??= setInterval(() => {
      this.#renewing = this.#renewing.then(async () => {
        for (const id of live()) {
          try {
            if (!(await this.take(id))) lost(id);
          } catch (error) {
            onError(error);
          }
        }
      });
    }, this.ms / 3);
    this.#renewal.unref();
  }

  /** Stops renewing (the leases lapse unless released). */
  async stop(): Promise<void> {
    clearInterval(this.#renewal);
    this.#renewal = undefined;
    await this.#renewing;
  }
}

function leaseName(id: string): string {
  return `devbox/${id}`;
}
