import type { DevBoxEffects } from "../runtime/effects.js";
import { recoverRun } from "../runtime/recover.js";
import type { RunDocument, Runtime } from "../runtime/runtime.js";
import type { Store } from "../store/store.js";
import type { Admission } from "./admission.js";
import type { AppLog } from "./app-host.js";
import type { Surfaces } from "./surfaces.js";

/**
 * After every applied transition: sync the run's surfaces, and when the run stopped holding an
 * admission slot (ended or waits on people), start what its queue admits now and show the
 * runs still queued their new places.
 */
export function settleTransition(
  run: RunDocument,
  deps: { store: Store; surfaces: Surfaces; admission: Admission; log: AppLog },
): void {
  const { state } = run;
  deps.surfaces.request(state.runId);
  if (state.status === "running" || state.status === "queued") return;
  void (async () => {
    const stored = await deps.store.getRun(state.runId);
    if (stored !== undefined) await drainQueue(deps, stored.repo, stored.workflow);
  })().catch((error: unknown) => deps.log.error(`admission after run ${state.runId}`, error));
}

/**
 * Picks up the active runs of the store after a restart (the runtime's one recovery path:
 * outboxes, DevBoxes this process does not run reported lost, questions asked again) and syncs
 * their surfaces.
 */
export async function recoverRuns(deps: {
  store: Store;
  runtime: Runtime;
  effects: DevBoxEffects;
  surfaces: Surfaces;
  admission: Admission;
  now: () => number;
}): Promise<void> {
  const queues = new Map<string, { repo: string; workflow: string }>();
  for (const stored of await deps.store.listActiveRuns()) {
    await recoverRun(deps, stored.runId, "the app process that ran it stopped");
    deps.surfaces.request(stored.runId);
    if (stored.status === "queued") {
      queues.set(`${stored.repo}#${stored.workflow}`, {
        repo: stored.repo,
        workflow: stored.workflow,
      });
    }
  }
  // Runs a crash left queued (created, never started) start when admission allows.
  for (const { repo, workflow } of queues.values()) await drainQueue(deps, repo, workflow);
}

/** Starts what a queue admits, and syncs the surfaces of what started and what still waits. */
async function drainQueue(
  deps: { surfaces: Surfaces; admission: Admission },
  repo: string,
  workflow: string,
): Promise<void> {
  const started = await deps.admission.drain(repo, workflow);
  const { queued } = await deps.admission.counts(repo, workflow);
  for (const runId of [...started, ...queued.map((run) => run.runId)]) {
    deps.surfaces.request(runId);
  }
}
