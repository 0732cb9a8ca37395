import type { Effect, RunEvent } from "../engine/model.js";
import type { DevBoxHub } from "../devbox/hub/hub.js";
import type { DevBoxEvent } from "../devbox/hub/events.js";
import type { DevBoxExecutor } from "../devbox/executor.js";
import type { DiffSource } from "../agents/diff-source.js";
import { JudgeError } from "../agents/judge-error.js";
import { gatherJudgeContext } from "../agents/judge-material.js";
import { pendingQuestions } from "../engine/judging.js";
import type { EvidenceEntry } from "../engine/model.js";
import type { Store } from "../store/store.js";
import type { Judge, JudgeRequest } from "./judge.js";
import type { RunDocument } from "./runtime.js";

/** Performs one effect of a run under its idempotency key; returns what the receipt records. */
export interface EffectPerformer {
  perform(runId: string, effect: Effect): Promise<unknown>;
}

/** Where DevBoxes clone from and what they are given. */
export interface DevBoxSource {
  /** A path or URL of the run's source repository. */
  repositoryOf(runId: string): Promise<string>;
  /** The environment secrets are copied from, by name. */
  env: NodeJS.ProcessEnv;
}

/** The DevBox id used outside the engine: unique across runs. */
export function globalDevBoxId(runId: string, devboxId: string): string {
  return `${runId}-${devboxId}`;
}

/** Splits a global DevBox id back into run and engine id. */
export function splitDevBoxId(globalId: string): { runId: string; devboxId: string } {
  const cut = globalId.lastIndexOf("-");
  return { runId: globalId.slice(0, cut), devboxId: globalId.slice(cut + 1) };
}

/**
 * Performs effects with DevBoxes on an executor behind this process's hub, timers in the store
 * and a judge. Results that come later (DevBox events, verdicts) are delivered as events.
 */
export class DevBoxEffects implements EffectPerformer {
  readonly #live = new Set<string>();

  constructor(
    private readonly deps: {
      store: Store;
      hub: DevBoxHub;
      executor: DevBoxExecutor;
      judge: Judge;
      source: DevBoxSource;
      deliver: (runId: string, event: RunEvent) => void;
      now: () => number;
      /** Where judges' diffs come from; without one a judge reads no diff. */
      diffs?: DiffSource;
    },
  ) {}

  /** Does this process run DevBox `devboxId` of `runId`? DevBoxes of a dead process do not. */
  isLive(runId: string, devboxId: string): boolean {
    return this.#live.has(globalDevBoxId(runId, devboxId));
  }

  /** Turns a hub event into a run event. An interrupted command is a lost DevBox. */
  onHubEvent(event: DevBoxEvent): void {
    const { runId, devboxId } = splitDevBoxId(event.devboxId);
    const at = this.deps.now();
    if (event.type === "command.finished" && event.result.interrupted === true) {
      this.#live.delete(event.devboxId);
      const reason = "the command was interrupted before it reported";
      this.deps.deliver(runId, {
        type: "devbox.lost",
        devboxId,
        reason,
        runningCommandId: event.result.commandId,
        at,
      });
      return;
    }
    if (event.type === "devbox.lost") this.#live.delete(event.devboxId);
    this.deps.deliver(runId, { ...event, devboxId, at });
  }

  async perform(runId: string, effect: Effect): Promise<unknown> {
    const { hub, executor, store } = this.deps;
    switch (effect.type) {
      case "devbox.claim": {
        const id = globalDevBoxId(runId, effect.devboxId);
        if (this.#live.has(id)) return { started: "already" };
        const { token } = hub.register({ devboxId: id, runId });
        this.#live.add(id);
        const secrets = Object.fromEntries(
          effect.spec.secrets.flatMap((name) => {
            const value = this.deps.source.env[name];
            return value === undefined ? [] : [[name, value]];
          }),
        );
        try {
          await executor.start({
            devboxId: id,
            runId,
            apiUrl: hub.url,
            token,
            spec: effect.spec,
            repository: await this.deps.source.repositoryOf(runId),
            env: secrets,
          });
        } catch (error) {
          // A DevBox that cannot start fails its node with the reason; the run goes on from there.
          this.#live.delete(id);
          hub.release(id);
          const reason = error instanceof Error ? error.message : String(error);
          const at = this.deps.now();
          queueMicrotask(() =>
            this.deps.deliver(runId, {
              type: "devbox.ready",
              devboxId: effect.devboxId,
              ok: false,
              error: reason,
              at,
            }),
          );
          return { failed: reason };
        }
        return { started: id };
      }
      case "devbox.release": {
        const id = globalDevBoxId(runId, effect.devboxId);
        this.#live.delete(id);
        hub.release(id);
        await executor.stop(id);
        return { stopped: id };
      }
      case "command.dispatch": {
        const id = globalDevBoxId(runId, effect.devboxId);
        if (!this.#live.has(id)) {
          // The DevBox belonged to a process that died: its outcome is unknown.
          const at = this.deps.now();
          const reason = "the DevBox's runtime process stopped";
          queueMicrotask(() =>
            this.deps.deliver(runId, {
              type: "devbox.lost",
              devboxId: effect.devboxId,
              reason,
              at,
            }),
          );
          return { lost: id };
        }
        hub.dispatch(id, effect.request);
        return { dispatched: effect.request.commandId };
      }
      case "command.interrupt":
        hub.interrupt(globalDevBoxId(runId, effect.devboxId), effect.commandId);
        return { interrupted: effect.commandId };
      case "timer.set":
        await store.putTimer({ runId, timerId: effect.timerId, dueAt: effect.dueAt });
        return null;
      case "timer.cancel":
        await store.deleteTimer(runId, effect.timerId);
        return null;
      case "judge.request":
        void this.#judge(runId, effect);
        return { asked: effect.requestId };
      case "ledger.add": {
        const totalUsd = await store.addCost(
          await this.#ledgerScope(runId, effect.workflow),
          effect.day,
          effect.usd,
        );
        const { requestId } = effect;
        if (requestId !== undefined) {
          const at = this.deps.now();
          queueMicrotask(() =>
            this.deps.deliver(runId, { type: "ledger.total", requestId, totalUsd, at }),
          );
        }
        return { totalUsd };
      }
      case "evidence":
        return null;
    }
  }

  /**
   * After a restart: asks again what the run waits on an answer to (a judge's verdict, the daily
   * ledger's total), since an answer in flight when the process stopped is lost. Call it after
   * `Runtime.reconcile`, beside reporting lost DevBoxes.
   */
  async resumeQuestions(runId: string, run: RunDocument): Promise<number> {
    const questions = pendingQuestions(run.definition, run.state);
    for (const question of questions) await this.perform(runId, { ...question, seq: 0 });
    return questions.length;
  }

  /** The daily ledger's scope: per repository and workflow. */
  async #ledgerScope(runId: string, workflow: string): Promise<string> {
    const run = await this.deps.store.getRun(runId);
    return `${run?.repo ?? "unknown"}#${workflow}`;
  }

  /** Asks the judge with its material, and delivers the verdict or the failure as an event. */
  async #judge(runId: string, effect: JudgeRequest): Promise<void> {
    const { requestId } = effect;
    let event: RunEvent;
    try {
      const [stored, evidence] = await Promise.all([
        this.deps.store.getRun(runId),
        this.deps.store.listEvidence(runId),
      ]);
      const brief = (stored?.snapshot as RunDocument | undefined)?.definition.brief ?? "";
      const context = await gatherJudgeContext({
        request: effect,
        brief,
        repository: await this.deps.source.repositoryOf(runId),
        evidence: evidence.map((record) => record.entry as EvidenceEntry),
        ...(this.deps.diffs === undefined ? {} : { diffs: this.deps.diffs }),
      });
      const verdict = await this.deps.judge.decide(effect, context);
      event = { type: "judge.verdict", requestId, ...verdict, at: this.deps.now() };
    } catch (error) {
      const spent = error instanceof JudgeError ? error.spent : {};
      event = {
        type: "judge.failed",
        requestId,
        reason: error instanceof Error ? error.message : String(error),
        ...spent,
        at: this.deps.now(),
      };
    }
    this.deps.deliver(runId, event);
  }
}
