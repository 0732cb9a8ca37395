import type { Performer } from "./performer.js";

/** Writes a timer to the store, where the timer pump finds it when it is due. */
export const setTimer: Performer<"timer.set"> = async ({ store, runId }, effect) => {
  await store.putTimer({ runId, timerId: effect.timerId, dueAt: effect.dueAt });
  return { receipt: null };
};

/** Deletes a timer from the store. */
export const cancelTimer: Performer<"timer.cancel"> = async ({ store, runId }, effect) => {
  await store.deleteTimer(runId, effect.timerId);
  return { receipt: null };
};
