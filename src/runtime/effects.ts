import type { Effect } from "../engine/model.js";
import { pendingQuestions } from "../engine/judging.js";
import { globalDevBoxId } from "./devbox-registry.js";
import {
  claimDevBox,
  dispatchCommand,
  interruptCommand,
  releaseDevBox,
} from "./performers/devbox-performers.js";
import { moveRunBranch } from "./performers/branch-performer.js";
import { askJudge } from "./performers/judge-performer.js";
import { addToLedger } from "./performers/ledger-performer.js";
import type { Performer, PerformerDeps, PerformerTable } from "./performers/performer.js";
import { cancelTimer, setTimer } from "./performers/timer-performers.js";
import type { EffectPerformer, EventSink } from "./ports.js";
import { RunRepository, type RunDocument } from "../store/run-repository.js";

export { globalDevBoxId, splitDevBoxId } from "./devbox-registry.js";
export type { EffectPerformer } from "./ports.js";
export type { DevBoxSource } from "./performers/performer.js";

/**
 * The performer of each effect kind (a kind without one fails to compile). Evidence is written
 * by the runtime with the receipts (see `AfterEffects`), so performing it records nothing.
 */
const performers: PerformerTable = {
  "devbox.claim": claimDevBox,
  "devbox.release": releaseDevBox,
  "command.dispatch": dispatchCommand,
  "command.interrupt": interruptCommand,
  "branch.move": moveRunBranch,
  "timer.set": setTimer,
  "timer.cancel": cancelTimer,
  "judge.request": askJudge,
  "ledger.add": addToLedger,
  evidence: () => Promise.resolve({ receipt: null }),
};

/** What {@link DevBoxEffects} works with, passed explicitly. */
export type DevBoxEffectsDeps = PerformerDeps;

/**
 * Performs effects with DevBoxes on an executor behind this process's hub, timers in the store
 * and a judge. Results that come later (DevBox events, verdicts) are offered to the event sink
 * the effect was performed for.
 */
export class DevBoxEffects implements EffectPerformer {
  readonly #runs: RunRepository;

  constructor(private readonly deps: DevBoxEffectsDeps) {
    this.#runs = new RunRepository(deps.store);
  }

  /** Does this process run DevBox `devboxId` of `runId`? DevBoxes of a dead process do not. */
  isLive(runId: string, devboxId: string): boolean {
    return this.deps.registry.isLive(runId, devboxId);
  }

  /**
   * May this process declare DevBox `devboxId` of `runId`, which it does not run, lost? Only
   * when no live replica owns it: its lease lapsed (taken here until it is declared lost).
   */
  async mayDeclareLost(runId: string, devboxId: string): Promise<boolean> {
    const { leases } = this.deps;
    return leases === undefined || leases.take(globalDevBoxId(runId, devboxId));
  }

  /**
   * Stops renewing leases and gives up those of this process's DevBoxes, stopped by now: a
   * replica that shut down owns nothing, and the others may declare them lost at once.
   */
  async releaseLeases(): Promise<void> {
    const { leases, registry } = this.deps;
    if (leases === undefined) return;
    await leases.stop();
    for (const id of registry.liveIds()) await leases.release(id);
  }

  /** Starts renewing the leases of this process's DevBoxes; one taken over is stopped here. */
  keepLeases(onError: (error: unknown) => void): void {
    const { leases, registry, hub, executor } = this.deps;
    leases?.start(
      () => registry.liveIds(),
      (id) => {
        registry.forget(id);
        hub.release(id);
        executor.stop(id).catch(onError);
      },
      onError,
    );
  }

  /**
   * Performs `effect` of `runId` with the performer of its kind, then offers `events` what
   * follows from it: at once, or when it comes (a verdict).
   */
  async perform(runId: string, effect: Effect, events: EventSink): Promise<unknown> {
    const performer = performers[effect.type] as Performer<Effect["type"]>;
    const context = { ...this.deps, runs: this.#runs, runId, events };
    const { receipt, follow = [], later } = await performer(context, effect);
    for (const event of follow) events.offer(runId, event);
    if (later !== undefined) void later.then((event) => events.offer(runId, event));
    return receipt;
  }

  /**
   * After a restart: asks again what the run waits on an answer to (a judge's verdict, the daily
   * ledger's total), since an answer in flight when the process stopped is lost. Call it after
   * `Runtime.reconcile`, beside reporting lost DevBoxes.
   */
  async resumeQuestions(runId: string, run: RunDocument, events: EventSink): Promise<number> {
    const questions = pendingQuestions(run.definition, run.state);
    for (const question of questions) await this.perform(runId, { ...question, seq: 0 }, events);
    return questions.length;
  }
}
