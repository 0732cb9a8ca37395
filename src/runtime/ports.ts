import type { Effect, RunEvent, RunSnapshot } from "../engine/model.js";
import type { DevBoxEvent } from "../devbox/hub/events.js";

/**
 * Why an event was not applied: `unknown-run` when the run does not exist, `not-applicable`
 * when the engine refused it (the engine says why in words, which is `message`).
 */
export interface Refusal {
  code: "unknown-run" | "not-applicable";
  message: string;
}

/** What happened when an event was offered to a run. */
export type Delivery =
  | { applied: true; state: RunSnapshot }
  | { applied: false; state: RunSnapshot | undefined; refused: Refusal };

/**
 * Where events for runs go: the runtime implements it, and effects, DevBoxes and timers are
 * handed it. `offer` does not wait; a failure is the sink's to report.
 */
export interface EventSink {
  offer(runId: string, event: RunEvent): void;
}

/** What offers an event and waits for the outcome (admission, timers, recovery, answers). */
export interface RunDriver {
  deliver(runId: string, event: RunEvent): Promise<Delivery>;
}

/** Performs one effect of a run under its idempotency key; returns what the receipt records. */
export interface EffectPerformer {
  /** `events` is where results that come later (verdicts, DevBox events) are offered. */
  perform(runId: string, effect: Effect, events: EventSink): Promise<unknown>;
}

/** Where DevBox hubs and executors report what happens to a DevBox. */
export interface DevBoxEventSink {
  onHubEvent(event: DevBoxEvent): void;
}

/** What shows runs to people (the app's issue comments and check runs); local runs have none. */
export interface SurfacesPort {
  /** Asks for run `runId`'s surfaces to be brought up to date, soon. */
  request(runId: string): void;
  /**
   * Asks for them to be checked after a restart, in the background: behind every
   * {@link request}, so that answers to people go first.
   */
  resync(runId: string): void;
  /**
   * Resolves once the syncs of `runId` asked for so far are done (or given up). A finished run
   * stays listed for recovery until then, so a crash before its surfaces show the end leaves
   * them to a restart's resync instead of stale. Hosts that show runs nowhere leave it out.
   */
  shown?(runId: string): Promise<void>;
}

/** Where a host reports what it cannot hand to anyone. */
export interface HostLog {
  error(message: string, error: unknown): void;
}
