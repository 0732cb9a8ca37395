import { GitDiffSource } from "../agents/diff-source.js";
import { LocalExecutor } from "../devbox/local/executor.js";
import { containerExecutor } from "../devbox/container/executor.js";
import type { WarmDemand } from "../devbox/warm-demand.js";
import { decodeSettings, type Settings } from "../settings/index.js";
import type { Effect, RunDefinition, RunEvent, RunSnapshot } from "../engine/model.js";
import { openStore } from "../store/embedded.js";
import { setupCacheStore } from "../devbox/hub/cache/store-from-settings.js";
import { StateDirHolder } from "../store/state-dir-holder.js";
import type { Store } from "../store/store.js";
import { faultInjection } from "./fault-injection.js";
import { createHost, type DevBoxPorts, type Host } from "./host.js";
import { openDevBoxSide } from "./devbox-side.js";
import { openTelemetry } from "../telemetry/open-telemetry.js";
import { judgeFromSettings } from "./judge.js";
import { LocalDevBoxOwners } from "./local-devbox-owners.js";
import type { DevBoxEventSink } from "./ports.js";
import { RunRepository, type RunDocument } from "../store/run-repository.js";
import { isSettled, type Runtime } from "./runtime.js";

/** How a local host is opened. */
export interface LocalHostOptions {
  stateDir: string;
  env: NodeJS.ProcessEnv;
  /** The CLI command opening it, named in the state directory's holder note. */
  command?: string;
  now?: () => number;
  /** Told after every transition of every run. */
  onTransition?: (run: RunDocument, effects: Effect[], event: RunEvent) => void;
  /** The warm DevBoxes the local workflows ask for before any claim (`clustercode ui`). */
  warmDemand?: WarmDemand;
}

/** Waiters for runs to settle, woken after each transition or when the host fails. */
class SettleWatch {
  readonly #waiters = new Map<string, Set<(state: RunSnapshot | undefined) => void>>();
  failure: Error | undefined;

  notify(state: RunSnapshot): void {
    for (const wake of this.#waiters.get(state.runId) ?? []) wake(state);
  }

  fail(error: unknown): void {
    this.failure ??= error instanceof Error ? error : new Error(String(error));
    for (const waiters of this.#waiters.values()) for (const wake of waiters) wake(undefined);
  }

  wait(runId: string): Promise<RunSnapshot> {
    return new Promise((resolve, reject) => {
      const waiters = this.#waiters.get(runId) ?? new Set();
      this.#waiters.set(runId, waiters);
      const wake = (state: RunSnapshot | undefined) => {
        if (this.failure !== undefined) {
          waiters.delete(wake);
          reject(this.failure);
        } else if (state !== undefined && isSettled(state)) {
          waiters.delete(wake);
          resolve(state);
        }
      };
      waiters.add(wake);
      if (this.failure !== undefined) wake(undefined);
    });
  }
}

/**
 * Everything `clustercode run` needs in one process: the embedded store, the internal DevBox
 * API on 127.0.0.1 and local DevBoxes, as ports of the one {@link createHost} root (which
 * adds the runtime, judges with the git diff, admission and the timer pump).
 */
export class LocalHost {
  private constructor(
    private readonly host: Host,
    private readonly watch: SettleWatch,
    private readonly closers: (() => Promise<void>)[],
    private readonly holder: StateDirHolder,
  ) {}

  /** The store of the state directory. */
  get store(): Store {
    return this.host.store;
  }

  /** The runtime driving this process's runs. */
  get runtime(): Runtime {
    return this.host.runtime;
  }

  /** Opens the state directory's store, starts the hub and reaps DevBoxes of dead processes. */
  static async open(options: LocalHostOptions): Promise<LocalHost> {
    // Every setting the host reads, decoded once.
    const settings = decodeSettings(options.env);
    const now = options.now ?? Date.now;
    const watch = new SettleWatch();
    const opened = await openStore({ stateDir: options.stateDir, settings: settings.store });
    const store = opened.store;
    const holder = await StateDirHolder.claim(
      options.stateDir,
      { command: options.command ?? "run" },
      now,
    ).catch(async (error: unknown) => {
      await opened.close();
      throw error;
    });
    const fail = (error: unknown) => watch.fail(error);
    const owners = new LocalDevBoxOwners(options.stateDir);
    const host = await createHost({
      store,
      clock: now,
      log: { error: (_message, error) => fail(error) },
      judge: judgeFromSettings(settings.providers),
      diffs: new GitDiffSource(),
      holder: `local:${process.pid}`,
      devboxes: (events) => localDevBoxes({ ...options, settings }, store, events, fail, owners),
      devboxOwnership: owners,
      ...faultInjection(settings.diagnostics.faultAt),
      telemetry: await openTelemetry(options.env),
      onTransition: (run, done, event) => {
        holder.drives(run.state.runId).catch(fail);
        options.onTransition?.(run, done, event);
        watch.notify(run.state);
      },
    });
    host.pump.start();
    const closers = [
      () => host.close(),
      () => Promise.resolve(holder.release()),
      () => opened.close(),
    ];
    return new LocalHost(host, watch, closers, holder);
  }

  /** Creates a run and starts it when admission allows; else it waits in its queue. */
  async start(definition: RunDefinition, meta: { repo: string }): Promise<RunSnapshot> {
    // Named in the holder note before it starts: `log --follow` finds it driven at once.
    await this.holder.drives(definition.runId);
    return this.host.start(definition, meta).catch((error: unknown) => {
      this.watch.fail(error);
      throw error;
    });
  }

  /** Offers an event, keeping a failure for the waits. */
  async deliver(runId: string, event: RunEvent): Promise<void> {
    await this.runtime.deliver(runId, event).catch((error: unknown) => this.watch.fail(error));
  }

  /** Picks up a run after its process stopped (see {@link Host.resume}). */
  async resume(runId: string): Promise<RunSnapshot | undefined> {
    await this.holder.drives(runId);
    return this.host.resume(runId, "its runtime process stopped").catch((error: unknown) => {
      this.watch.fail(error);
      throw error;
    });
  }

  /**
   * Resolves when the run finishes or waits on people, here or in another process sharing the
   * state directory (`cancel` in another terminal); rejects when the host failed.
   */
  async settled(runId: string): Promise<RunSnapshot> {
    const waiting = this.watch.wait(runId);
    const look = async () => {
      const current = (await this.runtime.load(runId))?.document.state;
      if (current !== undefined) this.watch.notify(current);
    };
    const looking = setInterval(
      () => void look().catch((error) => this.watch.fail(error)),
      LOOK_MS,
    );
    try {
      await this.runtime.idle();
      await look();
      const settled = await waiting;
      // A look may see the final snapshot before its evidence is written: wait for that too.
      await this.runtime.idle();
      return settled;
    } finally {
      clearInterval(looking);
    }
  }

  /** Stops the timer pump, DevBoxes, the hub and the store. */
  async close(): Promise<void> {
    await this.runtime.idle();
    for (const close of this.closers) await close();
  }
}

/** Where a local run's warm DevBoxes clone from: its repository, a local path. */
const localSource = (repo: string) => Promise.resolve({ url: repo, env: {} });

/** How often a wait for a run looks at the store, for what other processes did to it. */
const LOOK_MS = 500;

/**
 * Local DevBoxes: processes in the state directory behind a hub on 127.0.0.1. Those a crashed
 * process left are stopped; those of another live process sharing the directory are its own.
 */
async function localDevBoxes(
  options: LocalHostOptions & { settings: Settings },
  store: Store,
  events: DevBoxEventSink,
  fail: (error: unknown) => void,
  owners: LocalDevBoxOwners,
): Promise<DevBoxPorts> {
  // The repository is a local path: warm DevBoxes clone it as it is, with no credentials.
  const { settings } = options;
  const { devboxes } = settings;
  const warm = {
    max: devboxes.warmMax,
    source: localSource,
    ...(options.warmDemand === undefined ? {} : { demand: options.warmDemand }),
  };
  const executor =
    devboxes.executor === "container"
      ? containerExecutor(options.stateDir, options.env, devboxes)
      : new LocalExecutor({
          stateDir: options.stateDir,
          env: options.env,
          warm,
          sandbox: { unsafe: devboxes.unsafeLocalDevBox, bwrap: devboxes.bwrap },
          setupCacheMaxBytes: devboxes.setupCacheMaxMb * 1024 * 1024,
        });
  await executor.reap(await owners.orphans(await executor.knownDevBoxIds()));
  const runs = new RunRepository(store);
  const side = {
    stateDir: options.stateDir,
    env: options.env,
    lapseMs: devboxes.lapseMs,
    providers: settings.providers,
    store,
    executor,
    onError: fail,
    setupCache: setupCacheStore(options.stateDir, settings),
    // DevBoxes clone and push through the hub; accepted pushes land in the local repository.
    upstreamOf: async (runId: string) => ({
      url: (await runs.repoOf(runId)) ?? "",
      env: {},
    }),
  };
  return openDevBoxSide(side, events);
}
