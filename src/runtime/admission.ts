import type { Workflow } from "../workflow/workflow.schema.js";
import { isFinal, type RunStatus } from "../engine/model.js";
import type { RosterEntry, RunHead, Store, StoredRun } from "../store/store.js";
import type { RunDriver } from "./ports.js";
import { RunRepository } from "../store/run-repository.js";

/** Where admission stands for one repository and workflow. */
export interface AdmissionCounts {
  active: number;
  awaiting: number;
  /** Queued runs, oldest first. */
  queued: RosterEntry[];
  /** Whether `max_awaiting_approval` paused admission and `resume_below` has not resumed it. */
  paused: boolean;
}

/** The store's name for the admission of `workflow` in `repo`. */
export function admissionScope(repo: string, workflow: string): string {
  return `${repo}#${workflow}`;
}

/**
 * Admission per repository and workflow (`admission:`): beyond `max_active_runs` new runs
 * queue; once `max_awaiting_approval` runs wait on people, nothing starts until fewer than
 * `resume_below` do (hysteresis, kept in the store so that replicas and restarts agree). Queued
 * runs start oldest first, under a store lease so one replica drains a queue at a time. It makes
 * no GitHub call: the app and local runs apply it alike.
 *
 * It counts from a roster kept in one store item per repository and workflow (a run's status
 * and creation time, set when the run is created and whenever its status changes), so a check
 * is one read however many runs there are. Without transactions the roster can lag a run whose
 * process died between writing the run and its entry; it never lacks a run (the entry is
 * written before the run is created). So before it refuses, admission rereads the runs the
 * roster counts against it, and a drain checks each queued run it finds; both correct the
 * roster. A roster never built (runs from before it) is built from the runs once.
 */
export class Admission {
  constructor(private readonly deps: { store: Store; now: () => number; holder: string }) {}

  /** Counts the runs of `workflow` in `repo`. */
  async counts(repo: string, workflow: string): Promise<AdmissionCounts> {
    const scope = admissionScope(repo, workflow);
    const state = await this.deps.store.admissionState(scope);
    return countsOf(state.roster ?? (await this.rebuild(repo, workflow)), state.paused);
  }

  /** May one more run of `workflow` start now, given the counts (not counting `runId`)? */
  async admits(repo: string, workflow: Workflow, counts: AdmissionCounts): Promise<boolean> {
    const limits = workflow.admission;
    if (limits === undefined) return true;
    const maxAwaiting = limits.max_awaiting_approval;
    if (maxAwaiting !== undefined) {
      const was = counts.paused;
      const paused =
        counts.awaiting >= maxAwaiting ||
        (was && counts.awaiting >= (limits.resume_below ?? maxAwaiting));
      if (paused !== was) {
        await this.deps.store.setAdmissionPaused(admissionScope(repo, workflow.name), paused);
      }
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
    const decide = async (counts: AdmissionCounts) => {
      const ahead = { ...counts, queued: counts.queued.filter((run) => run.runId !== runId) };
      return ahead.queued.length === 0 && (await this.admits(repo, workflow, ahead));
    };
    const counts = await this.counts(repo, workflow.name);
    if (
      !(await decide(counts)) &&
      !(await decide(await this.#recheck(repo, workflow.name, counts)))
    )
      return false;
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
   *
   * A drain that finds the lease held does nothing: the holder drains. But the holder may have
   * read the counts before the transition that freed a slot, so once it has released the lease
   * it looks again, and drains again when the first queued run is now admitted (bounded: each
   * round starts a run or finds the queue blocked).
   */
  async drain(repo: string, workflow: string, runs: RunDriver): Promise<string[]> {
    const started: string[] = [];
    for (let round = 0; round < 8; round++) {
      const drained = await this.#drainUnderLease(repo, workflow, runs);
      if (drained === undefined) break;
      started.push(...drained);
      if (!(await this.#headAdmitted(repo, workflow))) break;
    }
    return started;
  }

  /** One drain under the queue's lease; undefined when another holds it. */
  async #drainUnderLease(
    repo: string,
    workflow: string,
    runs: RunDriver,
  ): Promise<string[] | undefined> {
    const lease = `admission:${repo}#${workflow}`;
    const { store, now, holder } = this.deps;
    if (!(await store.acquireLease(lease, holder, now(), 30_000))) return undefined;
    const started: string[] = [];
    try {
      for (;;) {
        const counts = await this.counts(repo, workflow);
        const next = counts.queued[0];
        if (next === undefined) break;
        const pinned = await this.#queuedWorkflow(repo, workflow, next.runId);
        if (pinned === undefined) continue;
        if (!(await this.#admitsAfterRecheck(repo, workflow, pinned, counts))) break;
        const delivery = await runs.deliver(next.runId, { type: "run.start", at: now() });
        if (!delivery.applied) break;
        started.push(next.runId);
      }
    } finally {
      await store.releaseLease(lease, holder);
    }
    return started;
  }

  /** Would the first queued run of `workflow` be admitted now? (Read without the lease.) */
  async #headAdmitted(repo: string, workflow: string): Promise<boolean> {
    const counts = await this.counts(repo, workflow);
    const next = counts.queued[0];
    if (next === undefined) return false;
    const run = await new RunRepository(this.deps.store).get(next.runId);
    if (run?.stored.status !== "queued") return true;
    return this.admits(repo, run.document.definition.workflow, counts);
  }

  /**
   * The pinned workflow of queued run `runId`; undefined when the roster lagged the run (it is
   * put right, and the caller looks again).
   */
  async #queuedWorkflow(
    repo: string,
    workflow: string,
    runId: string,
  ): Promise<Workflow | undefined> {
    const run = await new RunRepository(this.deps.store).get(runId);
    if (run?.stored.status === "queued") return run.document.definition.workflow;
    await this.#correct(repo, workflow, runId, run?.stored);
    return undefined;
  }

  /** Does admission allow one more run of `pinned`, rereading the counted runs before refusing? */
  async #admitsAfterRecheck(
    repo: string,
    workflow: string,
    pinned: Workflow,
    counts: AdmissionCounts,
  ): Promise<boolean> {
    if (await this.admits(repo, pinned, counts)) return true;
    return this.admits(repo, pinned, await this.#recheck(repo, workflow, counts));
  }

  /** The counts after rereading the runs the roster says are running or awaiting input. */
  async #recheck(
    repo: string,
    workflow: string,
    counts: AdmissionCounts,
  ): Promise<AdmissionCounts> {
    const scope = admissionScope(repo, workflow);
    const { roster = [] } = await this.deps.store.admissionState(scope);
    const counted = roster.filter((entry) => entry.status !== "queued");
    const heads = new Map(
      (await this.deps.store.getRunHeads(counted.map((entry) => entry.runId))).map((head) => [
        head.runId,
        head,
      ]),
    );
    const stale = counted.filter((entry) => heads.get(entry.runId)?.status !== entry.status);
    if (stale.length === 0) return counts;
    for (const entry of stale)
      await this.#correct(repo, workflow, entry.runId, heads.get(entry.runId));
    return this.counts(repo, workflow);
  }

  /** Sets a run's roster entry to what the run says (removed when it is finished or gone). */
  async #correct(
    repo: string,
    workflow: string,
    runId: string,
    run: RunHead | undefined,
  ): Promise<void> {
    await this.deps.store.noteInRoster(admissionScope(repo, workflow), runId, rosterEntryOf(run));
  }

  /**
   * Builds the roster of a scope from its unfinished runs: once for runs that predate it, and
   * after a restart, for a queue a crash may have left behind.
   */
  async rebuild(repo: string, workflow: string): Promise<RosterEntry[]> {
    const heads = (await this.deps.store.listActiveRunHeads({ repo })).filter(
      (run) => run.workflow === workflow,
    );
    const entries = heads.map(({ runId, status, createdAt }) => ({ runId, status, createdAt }));
    await this.deps.store.rebuildRoster(admissionScope(repo, workflow), entries);
    return entries;
  }
}

/**
 * Creates `run` of `workflow`, writing its roster entry first when the workflow has
 * `admission:` (so the roster may lag a run, never lack one); false when it existed.
 */
export async function createRun(
  store: Store,
  run: StoredRun,
  workflow: Workflow,
): Promise<boolean> {
  await noteRun(store, run, workflow);
  return store.createRun(run);
}

/** Keeps the roster of `run`'s workflow current, for workflows with `admission:`. */
export async function noteRun(store: Store, run: StoredRun, workflow: Workflow): Promise<void> {
  if (workflow.admission === undefined) return;
  await store.noteInRoster(admissionScope(run.repo, run.workflow), run.runId, rosterEntryOf(run));
}

/** A run's roster entry; undefined (no entry) when the run is finished or gone. */
export function rosterEntryOf(
  run: Pick<RunHead, "runId" | "status" | "createdAt"> | undefined,
): RosterEntry | undefined {
  if (run === undefined || isFinal(run.status as RunStatus)) return undefined;
  return { runId: run.runId, status: run.status, createdAt: run.createdAt };
}

function countsOf(roster: RosterEntry[], paused: boolean): AdmissionCounts {
  return {
    active: roster.filter((run) => run.status === "running" || run.status === "awaiting_input")
      .length,
    awaiting: roster.filter((run) => run.status === "awaiting_input").length,
    queued: roster
      .filter((run) => run.status === "queued")
      .sort((a, b) => a.createdAt - b.createdAt || (a.runId < b.runId ? -1 : 1)),
    paused,
  };
}
