import type { Workflow } from "../workflow/workflow.schema.js";
import type { RunHead, Store } from "../store/store.js";
import type { RunDriver } from "./ports.js";
import { decodeRun } from "./run-repository.js";

/** Where admission stands for one repository and workflow. */
export interface AdmissionCounts {
  active: number;
  awaiting: number;
  /** Queued runs, oldest first. */
  queued: RunHead[];
}

/**
 * Admission per repository and workflow (`admission:`): beyond `max_active_runs` new runs
 * queue; once `max_awaiting_approval` runs wait on people, nothing starts until fewer than
 * `resume_below` do (hysteresis, kept in the store so that replicas and restarts agree). Queued
 * runs start oldest first, under a store lease so one replica drains a queue at a time. It makes
 * no GitHub call: the app and local runs apply it alike.
 */
export class Admission {
  constructor(private readonly deps: { store: Store; now: () => number; holder: string }) {}

  /** Counts the runs of `workflow` in `repo`. */
  async counts(repo: string, workflow: string): Promise<AdmissionCounts> {
    const runs = (await this.deps.store.listActiveRunHeads({ repo })).filter(
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

  /**
   * Starts queued run `runId` of `workflow` in `repo` through `runs` when admission allows it
   * now and no run is queued ahead of it. True when it was started, false when it stays queued.
   * A workflow without `admission:` has no queue: its run starts at once, reading no other run.
   */
  async admit(repo: string, workflow: Workflow, runId: string, runs: RunDriver): Promise<boolean> {
    if (workflow.admission === undefined) {
      await runs.deliver(runId, { type: "run.start", at: this.deps.now() });
      return true;
    }
    const counts = await this.counts(repo, workflow.name);
    const ahead = { ...counts, queued: counts.queued.filter((run) => run.runId !== runId) };
    if (ahead.queued.length > 0 || !(await this.admits(repo, workflow, ahead))) return false;
    await runs.deliver(runId, { type: "run.start", at: this.deps.now() });
    return true;
  }

  /** 1-based place of a queued run in its queue; undefined when it is not queued. */
  async queuePosition(repo: string, workflow: string, runId: string): Promise<number | undefined> {
    const { queued } = await this.counts(repo, workflow);
    const index = queued.findIndex((run) => run.runId === runId);
    return index < 0 ? undefined : index + 1;
  }

  /**
   * Starts queued runs of `workflow` in `repo`, oldest first, while admission allows, by
   * offering each `run.start` to `runs`.
   */
  async drain(repo: string, workflow: string, runs: RunDriver): Promise<string[]> {
    const lease = `admission:${repo}#${workflow}`;
    const { store, now, holder } = this.deps;
    if (!(await store.acquireLease(lease, holder, now(), 30_000))) return [];
    const started: string[] = [];
    try {
      for (;;) {
        const counts = await this.counts(repo, workflow);
        const next = counts.queued[0];
        if (next === undefined) break;
        const stored = await store.getRun(next.runId);
        if (stored === undefined) break;
        const pinned = decodeRun(stored).document.definition.workflow;
        if (!(await this.admits(repo, pinned, counts))) break;
        const delivery = await runs.deliver(next.runId, { type: "run.start", at: now() });
        if (!delivery.applied) break;
        started.push(next.runId);
      }
    } finally {
      await store.releaseLease(lease, holder);
    }
    return started;
  }
}
