import type { HeldDevBox, RunEvent } from "./model.js";
import type { Transition } from "./transition.js";

/** How many DevBoxes in a row may start on the wrong commit before the node fails. */
export const MAX_STALE_STARTS = 3;

type ReadyEvent = Extract<RunEvent, { type: "devbox.ready" }>;

/**
 * Whether a DevBox's ready must be refused for where it started: it was claimed to start on the
 * run's last checkpoint (`held.sha`) and reports another head. A DevBox on an older commit would
 * run the work of an earlier round, and its checkpoint push would be refused.
 */
export function startedStale(held: HeldDevBox | undefined, event: ReadyEvent): boolean {
  if (held === undefined || held.ready || !event.ok || held.sha === undefined) return false;
  return event.sha !== held.sha;
}

/**
 * Refuses `held`'s start on the wrong commit: it is released and another DevBox claimed in its
 * place (a fresh clone, synced again), up to {@link MAX_STALE_STARTS} in a row. Returns the new
 * DevBox, or the words of the failure once the tries are used up (the caller fails the start).
 */
export function reclaimStale(
  t: Transition,
  held: HeldDevBox,
  event: ReadyEvent,
): { devbox: HeldDevBox } | { error: string } {
  const tries = (held.staleStarts ?? 0) + 1;
  const expected = held.sha ?? "";
  const got = event.sha === undefined ? "no commit" : event.sha.slice(0, 12);
  t.record("devbox.stale", {
    devbox: held.id,
    expected,
    ...(event.sha === undefined ? {} : { sha: event.sha }),
    tries,
  });
  const why = `the DevBox started on ${got}, not on the run's last checkpoint ${expected.slice(0, 12)}`;
  if (tries >= MAX_STALE_STARTS) {
    return { error: `${why} (${tries} DevBoxes in a row; the run branch could not be synced)` };
  }
  t.releaseDevBox(held);
  return { devbox: { ...t.claimDevBox(held.branch), staleStarts: tries } };
}

/**
 * Where `held` is kept, as a setter: the run's DevBox or a prototype variant's still starting;
 * undefined when it is neither (its ready is stale anyway, and nothing is claimed for it).
 */
export function heldSlot(
  t: Transition,
  held: HeldDevBox,
): ((next: HeldDevBox) => void) | undefined {
  const s = t.snapshot;
  if (s.devbox?.id === held.id) return (next) => void (s.devbox = next);
  const progress = s.active?.progress;
  if (progress?.kind !== "prototype") return undefined;
  const variant = progress.variants.find((each) => each.devbox.id === held.id);
  if (variant?.phase !== "claim") return undefined;
  return (next) => void (variant.devbox = next);
}
