import type { RunDocument } from "../store/run-repository.js";
import type { Admission } from "./admission.js";
import type { HostLog, RunDriver, SurfacesPort } from "./ports.js";
import { RunRepository } from "../store/run-repository.js";
import type { Store } from "../store/store.js";
import { TaskSet } from "./concurrency/task-set.js";

/**
 * What follows a run's transitions beyond the run itself: its surfaces are brought up to
 * date, and when it stops holding an admission slot (ended, or waits on people) its queue
 * starts what admission allows now, and the runs still queued are shown their new places.
 */
export class Settlement {
  readonly #runs: RunRepository;
  /** Queue drains started after transitions and not yet done. */
  readonly #pending = new TaskSet();

  constructor(
    private readonly deps: {
      store: Store;
      admission: Admission;
      surfaces: SurfacesPort;
      log: HostLog;
    },
  ) {
    this.#runs = new RunRepository(deps.store);
  }

  /** After an applied transition of `run`; `runs` starts what its queue admits. */
  afterTransition(run: RunDocument, runs: RunDriver): void {
    const { state } = run;
    this.deps.surfaces.request(state.runId);
    if (state.status === "running" || state.status === "queued") return;
    const pending = (async () => {
      const loaded = await this.#runs.get(state.runId);
      if (loaded !== undefined) await this.drain(loaded.stored.repo, loaded.stored.workflow, runs);
    })().catch((error: unknown) =>
      this.deps.log.error(`admission after run ${state.runId}`, error),
    );
    void this.#pending.add(pending);
  }

  /** Waits until the queue drains started after transitions are done. */
  idle(): Promise<void> {
    return this.#pending.idle();
  }

  /** Are queue drains under way? */
  busy(): boolean {
    return this.#pending.busy();
  }

  /** Starts what a queue admits, and requests the surfaces of what started and what waits. */
  async drain(
    repo: string,
    workflow: string,
    runs: RunDriver,
    options: { rebuild?: boolean } = {},
  ): Promise<void> {
    const { admission, surfaces } = this.deps;
    if (options.rebuild === true) await admission.rebuild(repo, workflow);
    const started = await admission.drain(repo, workflow, runs);
    const { queued } = await admission.counts(repo, workflow);
    for (const runId of [...started, ...queued.map((run) => run.runId)]) surfaces.request(runId);
  }
}

/** The surfaces of a host that shows runs nowhere (the CLI prints progress on transitions). */
export const NO_SURFACES: SurfacesPort = { request: () => undefined, resync: () => undefined };
