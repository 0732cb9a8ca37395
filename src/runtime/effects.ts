import type { Effect, RunEvent } from "../engine/model.js";
import type { DevBoxHub } from "../devbox/hub/hub.js";
import type { DevBoxExecutor } from "../devbox/executor.js";
import type { DiffSource } from "../agents/diff-source.js";
import { JudgeError } from "../agents/judge-error.js";
import { gatherJudgeContext } from "../agents/judge-material.js";
import { pendingQuestions } from "../engine/judging.js";
import type { EvidenceEntry } from "../engine/model.js";
import type { Store } from "../store/store.js";
import type { DevBoxOwnership } from "./devbox-leases.js";
import { globalDevBoxId, type DevBoxRegistry } from "./devbox-registry.js";
import type { Judge, JudgeRequest } from "./judge.js";
import type { EffectPerformer, EventSink } from "./ports.js";
import { RunRepository, type RunDocument } from "./run-repository.js";

export { globalDevBoxId, splitDevBoxId } from "./devbox-registry.js";
export type { EffectPerformer } from "./ports.js";

/** Where DevBoxes clone from and what they are given. */
export interface DevBoxSource {
  /** A path or URL of the run's source repository. */
  repositoryOf(runId: string): Promise<string>;
  /** The environment secrets are copied from, by name. */
  env: NodeJS.ProcessEnv;
}

/** What {@link DevBoxEffects} works with, passed explicitly. */
export interface DevBoxEffectsDeps {
  store: Store;
  hub: DevBoxHub;
  executor: DevBoxExecutor;
  /** The DevBoxes this process runs; the hub reports to it. */
  registry: DevBoxRegistry;
  judge: Judge;
  source: DevBoxSource;
  now: () => number;
  /**
   * DevBox ownership in the store, when replicas share it: a claim starts its DevBox only under
   * its lease, and a DevBox whose lease another replica took is stopped. Without, this process
   * is the only one (the CLI's state directory is held by one process).
   */
  leases?: DevBoxOwnership;
  /**
   * Where judges' diffs come from, asked with the run's repository as the store names it
   * (a local path, or owner/name on GitHub); without one a judge reads no diff.
   */
  diffs?: DiffSource;
}

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

  /** Performs `effect` of `runId`; later results are offered to `events`. */
  async perform(runId: string, effect: Effect, events: EventSink): Promise<unknown> {
    const { hub, executor, store, registry } = this.deps;
    switch (effect.type) {
      case "devbox.claim": {
        const id = globalDevBoxId(runId, effect.devboxId);
        if (registry.has(id)) return { started: "already" };
        // Another replica started it (its outbox performed twice): one claim, one DevBox.
        if (this.deps.leases !== undefined && !(await this.deps.leases.take(id)))
          return { started: "elsewhere" };
        // The values of the run's secrets: the hub refuses a push that carries one.
        const secretValues = effect.spec.secrets.flatMap((name) => {
          const value = this.deps.source.env[name];
          return value === undefined || value === "" ? [] : [value];
        });
        const { token } = hub.register({ devboxId: id, runId, secretValues });
        hub.allowEgress(id, effect.spec.networkAllow);
        registry.claimed(id, events);
        // Provider keys the hub holds stay with it: the DevBox gets placeholders and its proxy.
        const providerEnv = hub.providerEnv(id, effect.spec.secrets);
        const names = effect.spec.secrets.filter((name) => providerEnv[name] === undefined);
        const secrets = Object.fromEntries(
          names.flatMap((name) => {
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
            spec: { ...effect.spec, secrets: names },
            // Git goes through the hub, which holds the repository's credentials.
            repository: hub.servesGit
              ? hub.gitUrl(id, (await store.getRun(runId))?.repo ?? "")
              : await this.deps.source.repositoryOf(runId),
            env: secrets,
            providerEnv,
            egressProxy: hub.egressProxyUrl(id),
          });
        } catch (error) {
          // A DevBox that cannot start fails its node with the reason; the run goes on from there.
          registry.forget(id);
          hub.release(id);
          await this.deps.leases?.release(id);
          const reason = error instanceof Error ? error.message : String(error);
          const at = this.deps.now();
          queueMicrotask(() =>
            events.offer(runId, {
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
        registry.forget(id);
        hub.release(id);
        await executor.stop(id);
        await this.deps.leases?.release(id);
        return { stopped: id };
      }
      case "command.dispatch": {
        const id = globalDevBoxId(runId, effect.devboxId);
        if (!registry.has(id)) {
          // The DevBox belonged to a process that died: its outcome is unknown.
          const at = this.deps.now();
          const reason = "the DevBox's runtime process stopped";
          queueMicrotask(() =>
            events.offer(runId, {
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
        void this.#judge(runId, effect, events);
        return { asked: effect.requestId };
      case "ledger.add": {
        // Keyed by the effect, so that performing it again (after a lost answer or a crash
        // before its receipt) adds nothing; a check (0) needs no key, and a re-asked one has none.
        const totalUsd = await store.addCost(
          await this.#ledgerScope(runId, effect.workflow),
          effect.day,
          effect.usd,
          ...(effect.usd === 0 ? [] : [`${runId}/${effect.seq}`]),
        );
        const { requestId } = effect;
        if (requestId !== undefined) {
          const at = this.deps.now();
          queueMicrotask(() =>
            events.offer(runId, { type: "ledger.total", requestId, totalUsd, at }),
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
  async resumeQuestions(runId: string, run: RunDocument, events: EventSink): Promise<number> {
    const questions = pendingQuestions(run.definition, run.state);
    for (const question of questions) await this.perform(runId, { ...question, seq: 0 }, events);
    return questions.length;
  }

  /** The daily ledger's scope: per repository and workflow. */
  async #ledgerScope(runId: string, workflow: string): Promise<string> {
    const run = await this.deps.store.getRun(runId);
    return `${run?.repo ?? "unknown"}#${workflow}`;
  }

  /** Asks the judge with its material, and delivers the verdict or the failure as an event. */
  async #judge(runId: string, effect: JudgeRequest, events: EventSink): Promise<void> {
    const { requestId } = effect;
    let event: RunEvent;
    try {
      const [loaded, evidence] = await Promise.all([
        this.#runs.get(runId),
        this.deps.store.listEvidence(runId),
      ]);
      const context = await gatherJudgeContext({
        request: effect,
        brief: loaded?.document.definition.brief ?? "",
        ...(loaded === undefined ? {} : { repository: loaded.stored.repo }),
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
    events.offer(runId, event);
  }
}
