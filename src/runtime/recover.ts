import type { RunSnapshot } from "../engine/model.js";
import type { DevBoxEffects } from "./effects.js";
import type { Runtime } from "./runtime.js";

/** The DevBoxes a run holds: the run's own and its racing prototype variants'. */
export function heldDevBoxes(state: RunSnapshot): string[] {
  const ids = state.devbox === undefined ? [] : [state.devbox.id];
  const progress = state.active?.progress;
  if (progress?.kind === "prototype") {
    for (const variant of progress.variants) {
      if (!["passed", "failed", "cancelled"].includes(variant.phase)) ids.push(variant.devbox.id);
    }
  }
  return ids;
}

/**
 * Picks up a run after the process that drove it stopped: performs what its outbox still owes,
 * reports the DevBoxes it held and this process does not run as lost (their outcome is
 * unknown), and asks again the questions whose answers died with that process (a judge's
 * verdict, the daily ledger's total). Returns where the run stands.
 */
export async function recoverRun(
  deps: {
    runtime: Runtime;
    effects: Pick<DevBoxEffects, "isLive" | "resumeQuestions">;
    now: () => number;
  },
  runId: string,
  reason: string,
): Promise<RunSnapshot | undefined> {
  const { runtime, effects } = deps;
  const loaded = await runtime.reconcile(runId);
  if (loaded === undefined) return undefined;
  for (const devboxId of heldDevBoxes(loaded.document.state)) {
    if (effects.isLive(runId, devboxId)) continue;
    await runtime.deliver(runId, { type: "devbox.lost", devboxId, reason, at: deps.now() });
  }
  const current = await runtime.load(runId);
  if (current !== undefined) await effects.resumeQuestions(runId, current.document);
  return current?.document.state;
}
