import type { RunSnapshot } from "../engine/model.js";
import type { DevBoxEffects } from "./effects.js";
import type { RunRepository } from "../store/run-repository.js";
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
  effects: Pick<DevBoxEffects, "isLive" | "mayDeclareLost" | "resumeQuestions">;
  now: () => number;
}

/** Where a recovered run stands, and whether a live replica still owns DevBoxes of it. */
export interface Recovered {
  state: RunSnapshot | undefined;
  /** DevBoxes of it that another live replica runs: to look at again once their lease lapses. */
  ownedElsewhere: boolean;
}

/**
 * Picks up a run after the process that drove it stopped: performs what its outbox still owes,
 * reports the DevBoxes it held that nobody runs any more as lost (this process does not run
 * them and their lease lapsed: their outcome is unknown), and asks again the questions whose
 * answers died with that process (a judge's verdict, the daily ledger's total).
 */
export async function recoverRun(
  deps: RecoverDeps,
  runId: string,
  reason: string,
): Promise<Recovered> {
  const { runtime, effects } = deps;
  const loaded = await runtime.reconcile(runId);
  if (loaded === undefined) return { state: undefined, ownedElsewhere: false };
  let delivered = false;
  let ownedElsewhere = false;
  for (const devboxId of heldDevBoxes(loaded.document.state)) {
    if (effects.isLive(runId, devboxId)) continue;
    if (!(await effects.mayDeclareLost(runId, devboxId))) {
      ownedElsewhere = true;
      continue;
    }
    await runtime.deliver(runId, { type: "devbox.lost", devboxId, reason, at: deps.now() });
    delivered = true;
  }
  // Read again only when an event moved it: recovering a parked run reads it once.
  const current = delivered ? await runtime.load(runId) : loaded;
  if (current !== undefined) await effects.resumeQuestions(runId, current.document, runtime);
  return { state: current?.document.state, ownedElsewhere };
}

/**
 * Picks up every active run of the store after a restart (each through {@link recoverRun}),
 * asks for their surfaces to be resynced in the background, and starts what the queues of runs a crash left queued admit.
 * Returns the runs with DevBoxes that other live replicas own (see {@link Recovered}).
 */
export async function recoverRuns(
  deps: RecoverDeps & { runs: RunRepository; surfaces: SurfacesPort; settlement: Settlement },
  reason: string,
): Promise<string[]> {
  const queues = new Map<string, { repo: string; workflow: string }>();
  // Listed without their snapshots, loaded one at a time: memory stays flat with many runs.
  // Finished runs whose last effects may not all be done, too (their outbox is completed).
  const ownedElsewhere: string[] = [];
  for (const head of await deps.runs.store.listActiveRunHeads({ owing: true })) {
    if ((await recoverRun(deps, head.runId, reason)).ownedElsewhere)
      ownedElsewhere.push(head.runId);
    deps.surfaces.resync(head.runId);
    if (head.status === "queued") {
      queues.set(`${head.repo}#${head.workflow}`, { repo: head.repo, workflow: head.workflow });
    }
  }
  // The rosters of queues a crash may have left behind are rebuilt from the runs first.
  for (const { repo, workflow } of queues.values())
    await deps.settlement.drain(repo, workflow, deps.runtime, { rebuild: true });
  return ownedElsewhere;
}
