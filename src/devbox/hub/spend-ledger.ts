/** What the engine said about a run's budget when it last dispatched an agent command. */
export interface SpendAllowance {
  /** What was left of the run's (and the node's) cost budget, per the engine. */
  roomUsd: number;
  /** The proxied spend the engine had counted in its cost by then. */
  countedUsd: number;
}

/** A reservation the proxy holds for one request until its reply is settled. */
export interface Reservation {
  readonly usd: number;
  settled: boolean;
}

/** Why a request does not fit in what the run has left. */
export interface Refusal {
  availableUsd: number;
  reserveUsd: number;
}

/**
 * The proxied spend of one run, shared by all its DevBoxes and commands in this process.
 * A request reserves its worst case before it is forwarded and settles what its reply cost
 * after; what is left for the next one is the engine's room at the last agent dispatch, less
 * the proxied spend the engine had not counted then, less what is reserved now. Counting
 * the engine's room and its counted proxied spend together makes a stale room harmless: a
 * reply the engine has not seen yet is still subtracted here.
 */
export class RunSpend {
  #allowance: SpendAllowance | undefined;
  /** Proxied spend settled for the run: at least what the engine says it counted. */
  #spentUsd = 0;
  #reservedUsd = 0;
  /** Settled spend not yet reported in a command result, by DevBox. */
  readonly #unreported = new Map<string, number>();

  /** An agent command was dispatched: the engine's view of the budget, or none (no budget). */
  allow(allowance: SpendAllowance | undefined): void {
    this.#allowance = allowance;
    if (allowance !== undefined) this.#spentUsd = Math.max(this.#spentUsd, allowance.countedUsd);
  }

  /** Whether a cost budget applies to the run's requests. */
  get budgeted(): boolean {
    return this.#allowance !== undefined;
  }

  /** What a new request may still reserve, or undefined without a budget. */
  availableUsd(): number | undefined {
    const allowance = this.#allowance;
    if (allowance === undefined) return undefined;
    return allowance.roomUsd + allowance.countedUsd - this.#spentUsd - this.#reservedUsd;
  }

  /** Reserves `usd` for a request, or says why it does not fit. */
  reserve(usd: number): Reservation | Refusal {
    const available = this.availableUsd();
    if (available !== undefined && (usd > available || available <= 0)) {
      return { availableUsd: Math.max(0, available), reserveUsd: usd };
    }
    this.#reservedUsd += usd;
    return { usd, settled: false };
  }

  /** Replaces a reservation with what the reply cost (0 when nothing was billed). */
  settle(reservation: Reservation, devboxId: string, costUsd: number): void {
    if (reservation.settled) return;
    reservation.settled = true;
    this.#reservedUsd = Math.max(0, this.#reservedUsd - reservation.usd);
    if (costUsd <= 0) return;
    this.#spentUsd += costUsd;
    this.#unreported.set(devboxId, (this.#unreported.get(devboxId) ?? 0) + costUsd);
  }

  /** Takes the DevBox's settled spend not yet reported, for the result it reports now. */
  takeUnreported(devboxId: string): number {
    const usd = this.#unreported.get(devboxId) ?? 0;
    this.#unreported.delete(devboxId);
    return Math.round(usd * 1_000_000) / 1_000_000;
  }
}

/** The proxied spend of every run whose DevBoxes this hub serves, by run id. */
export class SpendLedger {
  readonly #runs = new Map<string, RunSpend>();

  run(runId: string): RunSpend {
    let spend = this.#runs.get(runId);
    if (spend === undefined) {
      spend = new RunSpend();
      this.#runs.set(runId, spend);
    }
    return spend;
  }

  /** Forgets the runs not in `live` (none of their DevBoxes is known any more). */
  retain(live: ReadonlySet<string>): void {
    for (const runId of this.#runs.keys()) if (!live.has(runId)) this.#runs.delete(runId);
  }
}

export function isRefusal(value: Reservation | Refusal): value is Refusal {
  return "availableUsd" in value;
}
