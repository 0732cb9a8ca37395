import { setTimeout as sleep } from "node:timers/promises";
import type { Delivery } from "./app-runs.js";
import type { ReplicaFleet } from "./replica-fleet.js";

/** How long a delivery may go unacknowledged at most (a loaded machine is slow, not stuck). */
const ACK_WITHIN_MS = 120_000;

/** A random integer in [min, max]. */
function between(random: () => number, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1));
}

/**
 * GitHub and a load balancer in front of the fleet: each delivery goes to a random live replica,
 * one in four to a second one at the same time (a duplicate), one in six again a little later (a
 * redelivery); one not acknowledged is sent again to a live replica until it is.
 */
export class Traffic {
  /** When each delivery was first sent. */
  readonly sentAt = new Map<string, number>();

  constructor(
    private readonly fleet: ReplicaFleet,
    private readonly random: () => number,
  ) {}

  /** Resolves once `delivery` was acknowledged (by some replica). */
  async deliver(delivery: Delivery): Promise<void> {
    this.sentAt.set(delivery.id, Date.now());
    const twice = this.random() < 1 / 4;
    const again = this.random() < 1 / 6;
    const copies = [this.#untilAcknowledged(delivery)];
    if (twice) copies.push(this.#untilAcknowledged(delivery));
    if (again) {
      const later = between(this.random, 200, 3_000);
      copies.push(sleep(later).then(() => this.#untilAcknowledged(delivery)));
    }
    await Promise.all(copies);
  }

  async #untilAcknowledged(delivery: Delivery): Promise<void> {
    const deadline = Date.now() + ACK_WITHIN_MS;
    while (Date.now() < deadline) {
      const live = Array.from({ length: this.fleet.size }, (_, i) => i).filter((i) =>
        this.fleet.alive(i),
      );
      const to = live[between(this.random, 0, live.length - 1)];
      if (to !== undefined && (await this.fleet.send(to, delivery))) return;
      await sleep(200);
    }
    throw new Error(`delivery ${delivery.id} (${delivery.event}) never acknowledged`);
  }
}

/**
 * Kills a random live replica (never the last one) with its DevBoxes, `gapMs` apart (random in
 * the range), and starts it again after a random pause; `kills` times, or until stopped.
 */
export class Chaos {
  kills = 0;
  #stopped = false;
  #running: Promise<void> = Promise.resolve();

  constructor(
    private readonly fleet: ReplicaFleet,
    private readonly random: () => number,
    private readonly gapMs: [number, number],
  ) {}

  /** Starts killing, `kills` times at most. */
  start(kills: number): void {
    this.#stopped = false;
    this.#running = this.#loop(this.kills + kills);
  }

  /** Stops after the kill under way (its replica started again). */
  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#running;
  }

  /** Kills replica `i` now and starts it again after a random pause. */
  async killAndRestart(i: number): Promise<void> {
    await this.fleet.kill(i);
    this.kills++;
    await sleep(between(this.random, 200, 2_000));
    await this.fleet.start(i);
  }

  async #loop(upTo: number): Promise<void> {
    while (!this.#stopped && this.kills < upTo) {
      await sleep(between(this.random, ...this.gapMs));
      if (this.#stopped) return;
      const live = Array.from({ length: this.fleet.size }, (_, i) => i).filter((i) =>
        this.fleet.alive(i),
      );
      if (live.length < 2) continue;
      await this.killAndRestart(live[between(this.random, 0, live.length - 1)]!);
    }
  }
}
