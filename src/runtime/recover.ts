import type { RunSnapshot } from "../engine/model.js";
import type { DevBoxEffects } from "./effects.js";
import type { RunRepository } from "./run-repository.js";
import type { Runtime } from "./runtime.js";
import type { Settlement } from "./settlement.js";
import type { SurfacesPort } from "./ports.js";

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

/** What recovering a run works with. */
export interface RecoverDeps {
  runtime: Runtime;
  effects: Pick<DevBoxEffects, "isLive" | "resumeQuestions">;
  now: () => number;
}

/**
 * Picks up a run after the process that drove it stopped: performs what its outbox still owes,
 * reports the DevBoxes it held and this process does not run as lost (their outcome is
 * unknown), and asks again the questions whose answers died with that process (a judge's
 * verdict, the daily ledger's total). Returns where the run stands.
 */
export async function recoverRun(
  deps: RecoverDeps,
  runId: string,
  reason: string,
): Promise<RunSnapshot | undefined> {
  const { runtime, effects } = deps;
  const loaded = await runtime.reconcile(runId);
  if (loaded === undefined) return undefined;
  let delivered = false;
  for (const devboxId of heldDevBoxes(loaded.document.state)) {
    if (effects.isLive(runId, devboxId)) continue;
    await runtime.deliver(runId, { type: "devbox.lost", devboxId, reason, at: deps.now() });
    delivered = true;
  }
  // Read again only when an event moved it: recovering a parked run reads it once.
  const current = delivered ? await runtime.load(runId) : loaded;
  if (current !== undefined) await effects.resumeQuestions(runId, current.document, runtime);
  return current?.document.state;
}

/**
 * Picks up every active run of the store after a restart (each through {@link recoverRun}),
 * asks for their surfaces to be resynced in the background, and starts what the queues of runs a crash left queued admit.
 */
export async function recoverRuns(
  deps: RecoverDeps & { runs: RunRepository; surfaces: SurfacesPort; settlement: Settlement },
  reason: string,
): Promise<void> {
  const queues = new Map<string, { repo: string; workflow: string }>();
  // Listed without their snapshots, loaded one at a time: memory stays flat with many runs.
  // Finished runs whose last effects may not all be done, too (their outbox is completed).
  for (const head of await deps.runs.store.listActiveRunHeads({ owing: true })) {
    await recoverRun(deps, head.runId, reason);
    deps.surfaces.resync(head.runId);
    if (head.status === "queued") {
      queues.set(`${head.repo}#${head.workflow}`, { repo: head.repo, workflow: head.workflow });
    }
  }
  // The rosters of queues a crash may have left behind are rebuilt from the runs first.
  for (const { repo, workflow } of queues.values())
    await deps.settlement.drain(repo, workflow, deps.runtime, { rebuild: true });
}
