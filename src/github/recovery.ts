import type { RunSnapshot } from "../engine/model.js";
import type { DevBoxEffects } from "../runtime/effects.js";
import type { RunDocument, Runtime } from "../runtime/runtime.js";
import type { Store } from "../store/store.js";
import type { Admission } from "./admission.js";
import type { AppLog } from "./app-host.js";
import type { Surfaces } from "./surfaces.js";

/**
 * After every applied transition: sync the run's surfaces, and when the run stopped holding an
 * admission slot (ended or waits on people), start what its queue admits now.
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
    if (stored === undefined) return;
    for (const started of await deps.admission.drain(stored.repo, stored.workflow)) {
      deps.surfaces.request(started);
    }
  })().catch((error: unknown) => deps.log.error(`admission after run ${state.runId}`, error));
}

/**
 * Picks up the active runs of the store after a restart: performs what their outboxes still
 * owe, reports DevBoxes this process does not run as lost (their process is gone), and syncs
 * their surfaces.
 */
export async function recoverRuns(deps: {
  store: Store;
  runtime: Runtime;
  effects: DevBoxEffects;
  surfaces: Surfaces;
  now: () => number;
}): Promise<void> {
  for (const stored of await deps.store.listActiveRuns()) {
    const loaded = await deps.runtime.reconcile(stored.runId);
    if (loaded === undefined) continue;
    for (const devboxId of heldDevBoxes(loaded.document.state)) {
      if (deps.effects.isLive(stored.runId, devboxId)) continue;
      await deps.runtime.deliver(stored.runId, {
        type: "devbox.lost",
        devboxId,
        reason: "the app process that ran it stopped",
        at: deps.now(),
      });
    }
    deps.surfaces.request(stored.runId);
  }
}

function heldDevBoxes(state: RunSnapshot): string[] {
  const ids = state.devbox === undefined ? [] : [state.devbox.id];
  const progress = state.active?.progress;
  if (progress?.kind === "prototype") {
    for (const variant of progress.variants) {
      if (!["passed", "failed", "cancelled"].includes(variant.phase)) ids.push(variant.devbox.id);
    }
  }
  return ids;
}
