import type { DevBoxEvent } from "../devbox/hub/events.js";
import type { DevBoxEventSink, EventSink } from "./ports.js";

/** The DevBox id used outside the engine: unique across runs. */
export function globalDevBoxId(runId: string, devboxId: string): string {
  return `${runId}-${devboxId}`;
}

/** Splits a global DevBox id back into run and engine id. */
export function splitDevBoxId(globalId: string): { runId: string; devboxId: string } {
  const cut = globalId.lastIndexOf("-");
  return { runId: globalId.slice(0, cut), devboxId: globalId.slice(cut + 1) };
}

/**
 * The DevBoxes this process runs, each with the event sink of the run that claimed it: hubs
 * and executors report here, and their events reach that run as run events. It is built before
 * the hub and the runtime, so neither needs the other to exist first.
 */
export class DevBoxRegistry implements DevBoxEventSink {
  readonly #live = new Map<string, EventSink>();

  constructor(private readonly now: () => number) {}

  /** Records that this process started DevBox `id` (global) for a run whose events go to `events`. */
  claimed(id: string, events: EventSink): void {
    this.#live.set(id, events);
  }

  /** Forgets DevBox `id` (global): released, lost or never started. */
  forget(id: string): void {
    this.#live.delete(id);
  }

  /** Does this process run DevBox `devboxId` of `runId`? DevBoxes of a dead process do not. */
  isLive(runId: string, devboxId: string): boolean {
    return this.#live.has(globalDevBoxId(runId, devboxId));
  }

  /** The global ids of the DevBoxes this process runs. */
  liveIds(): string[] {
    return [...this.#live.keys()];
  }

  /** Is global DevBox `id` started here? */
  has(id: string): boolean {
    return this.#live.has(id);
  }

  /**
   * Turns a hub event into a run event. An interrupted command is a lost DevBox. Events of a
   * DevBox this process does not run have no run to go to and are dropped.
   */
  onHubEvent(event: DevBoxEvent): void {
    const events = this.#live.get(event.devboxId);
    if (events === undefined) return;
    const { runId, devboxId } = splitDevBoxId(event.devboxId);
    const at = this.now();
    if (event.type === "command.finished" && event.result.interrupted === true) {
      this.#live.delete(event.devboxId);
      const reason = "the command was interrupted before it reported";
      events.offer(runId, {
        type: "devbox.lost",
        devboxId,
        reason,
        runningCommandId: event.result.commandId,
        at,
      });
      return;
    }
    if (event.type === "devbox.lost") this.#live.delete(event.devboxId);
    events.offer(runId, { ...event, devboxId, at });
  }
}
