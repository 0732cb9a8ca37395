import type { DiffSource } from "../agents/diff-source.js";
import type { DevBoxExecutor } from "../devbox/executor.js";
import type { DevBoxHub } from "../devbox/hub/hub.js";
import type { Effect, RunDefinition, RunEvent, RunSnapshot } from "../engine/model.js";
import type { Store } from "../store/store.js";
import { Admission } from "./admission.js";
import { DevBoxRegistry } from "./devbox-registry.js";
import { DevBoxEffects, type DevBoxSource } from "./effects.js";
import type { Judge } from "./judge.js";
import type { DevBoxEventSink, HostLog, SurfacesPort } from "./ports.js";
import { DevBoxLeases, type DevBoxOwnership } from "./devbox-leases.js";
import { recoverRun, recoverRuns } from "./recover.js";
import { RunRepository, type RunDocument } from "../store/run-repository.js";
import { Runtime, type RuntimeOptions } from "./runtime.js";
import { NO_SURFACES, Settlement } from "./settlement.js";
import { TimerPump } from "./timer-pump.js";
import { idleAll } from "./concurrency/task-set.js";
import { NO_TELEMETRY, type Telemetry } from "../telemetry/telemetry.js";

/** The DevBox side a host runs on: started by its `devboxes` port. */
export interface DevBoxPorts {
  /** The internal DevBox API, listening. */
  hub: DevBoxHub;
  executor: DevBoxExecutor;
  /** Where DevBoxes clone from and the environment their secrets are copied from. */
  source: DevBoxSource;
  /** Stops the DevBoxes and the hub. */
  close(): Promise<void>;
}

/**
 * What a host is built from. The app and the CLI each supply these and nothing else; every
 * part that decides anything about runs is built by {@link createHost} from them.
 */
export interface HostPorts {
  store: Store;
  clock: () => number;
  log: HostLog;
  judge: Judge;
  /** Where judges read a run branch's diff (asked with the run's repository as stored). */
  diffs: DiffSource;
  /** This process, as leases name their holder. */
  holder: string;
  /** Starts the executor and the hub, both reporting to `events`; `surfaces` hears of notices. */
  devboxes(events: DevBoxEventSink, surfaces: SurfacesPort): Promise<DevBoxPorts>;
  /** What shows runs to people; default none. */
  surfaces?: SurfacesPort;
  /** Run admission, when the surfaces show queue places from it; default one of its own. */
  admission?: Admission;
  /** Told after every applied transition, after the host's own follow-up. */
  onTransition?: (run: RunDocument, effects: Effect[], event: RunEvent) => void;
  /** Where spans and metrics of runs go; default nowhere. */
  telemetry?: Telemetry;
  /**
   * Replicas share the store: DevBoxes are owned under leases of this length (see
   * {@link DevBoxLeases}), or as `devboxOwnership` says; with neither, the process is alone
   * with its store.
   */
  devboxLeaseMs?: number;
  /** Who owns which DevBox, when not leases in the store (the CLI's processes on one machine). */
  devboxOwnership?: DevBoxOwnership;
  /** Fault injection at the runtime's effect boundaries (see {@link RuntimeOptions}). */
  atBoundary?: RuntimeOptions["atBoundary"];
}

/**
 * One process's runs: the runtime over the store, effects on DevBoxes with judges that read
 * diffs, admission, the timer pump and recovery, wired once for the app and the CLI alike.
 */
export class Host {
  constructor(
    readonly store: Store,
    readonly runtime: Runtime,
    readonly admission: Admission,
    readonly surfaces: SurfacesPort,
    readonly pump: TimerPump,
    private readonly effects: DevBoxEffects,
    private readonly settlement: Settlement,
    private readonly devboxes: DevBoxPorts,
    private readonly clock: () => number,
    readonly telemetry: Telemetry,
    private readonly leases: DevBoxOwnership | undefined,
  ) {}

  #recheck: NodeJS.Timeout | undefined;

  /**
   * Creates a run queued and starts it when its workflow's admission allows it now; else it
   * waits in its queue until a run ahead of it settles. Returns where it stands.
   */
  async start(definition: RunDefinition, meta: { repo: string }): Promise<RunSnapshot> {
    const { runId } = definition;
    await this.runtime.create(definition, meta);
    await this.admission.admit(meta.repo, definition.workflow, runId, this.runtime);
    this.surfaces.request(runId);
    const loaded = await this.runtime.load(runId);
    if (loaded === undefined) throw new Error(`programmer error: run ${runId} was not created`);
    return loaded.document.state;
  }

  /** Picks up one run after the process that drove it stopped (see {@link recoverRun}). */
  async resume(runId: string, reason: string): Promise<RunSnapshot | undefined> {
    const deps = { runtime: this.runtime, effects: this.effects, now: this.clock };
    return (await recoverRun(deps, runId, reason)).state;
  }

  /**
   * Picks up every active run a previous process left, and drains queues a crash left. Runs
   * with DevBoxes another replica owns are looked at again each time a lease could have lapsed,
   * until none is owned elsewhere: a replica that died with them is then found out.
   */
  async recover(reason: string): Promise<void> {
    const runs = new RunRepository(this.store);
    const deps = { runtime: this.runtime, effects: this.effects, now: this.clock };
    const elsewhere = await recoverRuns(
      { ...deps, runs, surfaces: this.surfaces, settlement: this.settlement },
      reason,
    );
    const recheck = (runIds: string[]) => {
      if (runIds.length === 0 || this.leases === undefined) return;
      this.#recheck = setTimeout(() => {
        void (async () => {
          const still: string[] = [];
          for (const runId of runIds) {
            const recovered = await recoverRun(deps, runId, reason).catch(() => undefined);
            if (recovered?.ownedElsewhere !== false) still.push(runId);
          }
          recheck(still);
        })();
      }, this.leases.ms);
      this.#recheck.unref();
    };
    recheck(elsewhere);
  }

  /** Waits until the events offered so far and the queue drains they started are done. */
  idle(): Promise<void> {
    return idleAll([this.runtime, this.settlement]);
  }

  /** Stops the timer pump, waits for runs in flight, stops DevBoxes and the hub, flushes spans. */
  async close(): Promise<void> {
    clearTimeout(this.#recheck);
    await this.pump.stop();
    await this.idle();
    await this.devboxes.close();
    await this.effects.releaseLeases();
    await this.telemetry.shutdown();
  }
}

/** Builds a {@link Host} from its ports; the timer pump is not started yet. */
export async function createHost(ports: HostPorts): Promise<Host> {
  const { store, clock: now, log, holder } = ports;
  const admission = ports.admission ?? new Admission({ store, now, holder });
  const surfaces = ports.surfaces ?? NO_SURFACES;
  const settlement = new Settlement({ store, admission, surfaces, log });
  const registry = new DevBoxRegistry(now);
  const devboxes = await ports.devboxes(registry, surfaces);
  const leases =
    ports.devboxLeaseMs === undefined
      ? ports.devboxOwnership
      : new DevBoxLeases({ store, holder, now, ms: ports.devboxLeaseMs });
  const effects = new DevBoxEffects({
    store,
    ...(leases === undefined ? {} : { leases }),
    hub: devboxes.hub,
    executor: devboxes.executor,
    registry,
    judge: ports.judge,
    diffs: ports.diffs,
    source: devboxes.source,
    now,
  });
  const { onTransition, telemetry = NO_TELEMETRY } = ports;
  const runtime = new Runtime({
    store,
    performer: effects,
    now,
    onTransition: (run, done, event, runs, repo) => {
      settlement.afterTransition(run, runs);
      telemetry.observe(run, repo, done);
      onTransition?.(run, done, event);
    },
    onError: (error, runId) => log.error(`run ${runId}`, error),
    beforeOutboxCleared: (runId) => surfaces.shown?.(runId) ?? Promise.resolve(),
    ...(ports.atBoundary === undefined ? {} : { atBoundary: ports.atBoundary }),
  });
  const pump = new TimerPump({ store, runtime, now, onError: (e) => log.error("timers", e) });
  effects.keepLeases((error) => log.error("DevBox leases", error));
  return new Host(
    store,
    runtime,
    admission,
    surfaces,
    pump,
    effects,
    settlement,
    devboxes,
    now,
    telemetry,
    leases,
  );
}
