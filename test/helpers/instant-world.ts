import type { DevBoxHub } from "../../src/devbox/hub/hub.js";
import type { DevBoxExecutor } from "../../src/devbox/executor.js";
import type { CommandRequest } from "../../src/engine/commands.js";
import type { Effect, RunEvent } from "../../src/engine/model.js";
import { DevBoxRegistry } from "../../src/runtime/devbox-registry.js";
import { DevBoxEffects, type EffectPerformer } from "../../src/runtime/effects.js";
import type { EventSink } from "../../src/runtime/ports.js";
import { NO_JUDGE, type Judge } from "../../src/runtime/judge.js";
import type { RunDocument } from "../../src/runtime/runtime.js";
import { Runtime } from "../../src/runtime/runtime.js";
import type { Store } from "../../src/store/store.js";
import type { DiffSource } from "../../src/agents/diff-source.js";

/** How the fake DevBoxes answer. */
export interface InstantWorldOptions {
  store: Store;
  /** Judges' verdicts (default none: a judge node fails). */
  judge?: Judge;
  /** The source repository every run clones (a path; default none). */
  repository?: string;
  diffs?: DiffSource;
  /** Exit code of a command (default 0). */
  exit?: (request: CommandRequest, devboxId: string) => number;
  /** Cost an agent turn reports. */
  cost?: number;
  /** The output tail a command reports (default none). */
  output?: (request: CommandRequest) => string;
  /** What the host awaits before a finished run's outbox is cleared (the app: its surfaces). */
  beforeOutboxCleared?: (runId: string) => Promise<void>;
}

/**
 * The one run harness of the runtime's tests: a runtime whose DevBoxes answer at once (no
 * processes), while judges and the daily ledger go through the real `DevBoxEffects`, store and
 * judge. `crashAt` makes the effect of that number throw (a crash while performing effects).
 */
export class InstantWorld implements EffectPerformer {
  readonly runtime: Runtime;
  readonly effects: DevBoxEffects;
  readonly performed: Effect[] = [];
  /** Errors of event deliveries: a test asserts there are none. */
  readonly errors: unknown[] = [];
  /** Where the real effects offer their events: the runtime, a microtask later. */
  readonly events: EventSink = { offer: (runId, event) => this.#later(runId, event) };
  crashAt = Infinity;

  constructor(private readonly options: InstantWorldOptions) {
    const unused = new Proxy(
      {},
      {
        get: () => {
          throw new Error("the instant world runs no DevBox processes");
        },
      },
    );
    this.effects = new DevBoxEffects({
      store: options.store,
      hub: unused as DevBoxHub,
      executor: unused as DevBoxExecutor,
      registry: new DevBoxRegistry(Date.now),
      judge: options.judge ?? NO_JUDGE,
      source: { env: {}, repositoryOf: () => Promise.resolve(options.repository ?? "/nowhere") },
      now: Date.now,
      ...(options.diffs === undefined ? {} : { diffs: options.diffs }),
    });
    const { beforeOutboxCleared } = options;
    this.runtime = new Runtime({
      store: options.store,
      performer: this,
      now: Date.now,
      ...(beforeOutboxCleared === undefined ? {} : { beforeOutboxCleared }),
    });
  }

  perform(runId: string, effect: Effect): Promise<unknown> {
    if (this.performed.length + 1 >= this.crashAt) return Promise.reject(new Error("crash"));
    this.performed.push(effect);
    const at = Date.now();
    switch (effect.type) {
      case "judge.request":
      case "ledger.add":
        return this.effects.perform(runId, effect, this.events);
      case "devbox.claim":
        // A DevBox starts on the commit its claim names, as a real one does.
        this.#later(runId, {
          type: "devbox.ready",
          devboxId: effect.devboxId,
          ok: true,
          ...(effect.spec.sha === undefined ? {} : { sha: effect.spec.sha }),
          at,
        });
        return Promise.resolve({ started: effect.devboxId });
      case "command.dispatch": {
        const { request } = effect;
        const agent = request.command.type === "agent" && this.options.cost !== undefined;
        const result = {
          commandId: request.commandId,
          exitCode: this.options.exit?.(request, effect.devboxId) ?? 0,
          output: this.options.output?.(request) ?? "",
          durationMs: 5,
          ...(agent ? { costUsd: this.options.cost } : {}),
          ...(request.command.type === "checkpoint" ? { sha: `sha-${request.commandId}` } : {}),
        };
        this.#later(runId, { type: "command.finished", devboxId: effect.devboxId, result, at });
        return Promise.resolve({ dispatched: request.commandId });
      }
      default:
        return Promise.resolve(null);
    }
  }

  /** Waits until the run has ended, and returns its document. */
  async settled(runId: string, timeoutMs = 10_000): Promise<RunDocument> {
    const end = Date.now() + timeoutMs;
    while (Date.now() < end) {
      await this.runtime.idle();
      const loaded = await this.runtime.load(runId);
      const status = loaded?.document.state.status;
      if (status === "succeeded" || status === "failed" || status === "escalated") {
        await this.runtime.idle();
        return (await this.runtime.load(runId))?.document as RunDocument;
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`run ${runId} did not settle`);
  }

  #later(runId: string, event: RunEvent): void {
    queueMicrotask(
      () =>
        void this.runtime.deliver(runId, event).catch((error: unknown) => this.errors.push(error)),
    );
  }
}

/** A runtime over `store` whose DevBoxes answer at once. */
export function openRuntime(store: Store): Runtime {
  return new InstantWorld({ store }).runtime;
}
