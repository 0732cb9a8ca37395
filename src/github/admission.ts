import type { Workflow } from "../workflow/workflow.schema.js";
import type { Runtime, RunDocument } from "../runtime/runtime.js";
import type { Store, StoredRun } from "../store/store.js";

/** Where admission stands for one repository and workflow. */
export interface AdmissionCounts {
  active: number;
  awaiting: number;
  /** Queued runs, oldest first. */
  queued: StoredRun[];
}

/**
 * Admission per repository and workflow (`admission:`): beyond `max_active_runs` new runs
 * queue; once `max_awaiting_approval` runs wait on people, nothing starts until fewer than
 * `resume_below` do (hysteresis, kept in the store so that replicas and restarts agree). Queued
 * runs start oldest first, under a store lease so one replica drains a queue at a time.
 */
export class Admission {
  constructor(
    private readonly deps: { store: Store; runtime: Runtime; now: () => number; holder: string },
  ) {}

  /** Counts the runs of `workflow` in `repo`. */
  async counts(repo: string, workflow: string): Promise<AdmissionCounts> {
    const runs = (await this.deps.store.listActiveRuns({ repo })).filter(
      (run) => run.workflow === workflow,
    );
    return {
      active: runs.filter((run) => run.status === "running" || run.status === "awaiting_input")
        .length,
      awaiting: runs.filter((run) => run.status === "awaiting_input").length,
      queued: runs
        .filter((run) => run.status === "queued")
        .sort((a, b) => a.createdAt - b.createdAt),
    };
  }

  /** May one more run of `workflow` start now, given the counts (not counting `runId`)? */
  async admits(repo: string, workflow: Workflow, counts: AdmissionCounts): Promise<boolean> {
    const limits = workflow.admission;
    if (limits === undefined) return true;
    const maxAwaiting = limits.max_awaiting_approval;
    if (maxAwaiting !== undefined) {
      const scope = `${repo}#${workflow.name}`;
      const { store } = this.deps;
      const was = await store.admissionPaused(scope);
      const paused =
        counts.awaiting >= maxAwaiting ||
        (was && counts.awaiting >= (limits.resume_below ?? maxAwaiting));
      if (paused !== was) await store.setAdmissionPaused(scope, paused);
      if (paused) return false;
    }
    return limits.max_active_runs === undefined || counts.active < limits.max_active_runs;
  }

  /** 1-based place of a queued run in its queue; undefined when it is not queued. */
  async queuePosition(repo: string, workflow: string, runId: string): Promise<number | undefined> {
    const { queued } = await this.counts(repo, workflow);
    const index = queued.findIndex((run) => run.runId === runId);
    return index < 0 ? undefined : index + 1;
  }

  /** Starts queued runs of `workflow` in `repo`, oldest first, while admission allows. */
  async drain(repo: string, workflow: string): Promise<string[]> {
    const lease = `admission:${repo}#${workflow}`;
    const { store, runtime, now, holder } = this.deps;
    if (!(await store.acquireLease(lease, holder, now(), 30_000))) return [];
    const started: string[] = [];
    try {
      for (;;) {
        const counts = await this.counts(repo, workflow);
        const next = counts.queued[0];
        if (next === undefined) break;
        const pinned = (next.snapshot as RunDocument).definition.workflow;
        if (!(await this.admits(repo, pinned, counts))) break;
        const delivery = await runtime.deliver(next.runId, { type: "run.start", at: now() });
        if (!delivery.applied) break;
        started.push(next.runId);
      }
    } finally {
      await store.releaseLease(lease, holder);
    }
    return started;
  }
}
