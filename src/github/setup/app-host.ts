import { DefaultBranchMoves } from "../../devbox/branch-moves.js";
import { WarmDemand } from "../../devbox/warm-demand.js";
import { Admission } from "../../runtime/admission.js";
import { faultInjection } from "../../runtime/fault-injection.js";
import { createHost, type Host } from "../../runtime/host.js";
import { openTelemetry } from "../../telemetry/open-telemetry.js";
import type { Telemetry } from "../../telemetry/telemetry.js";
import { judgeFromSettings } from "../../runtime/judge.js";
import { decodeSettings } from "../../settings/index.js";
import type { HostLog } from "../../runtime/ports.js";
import type { Runtime } from "../../runtime/runtime.js";
import { openStore } from "../../store/embedded.js";
import type { DeliveryRecord, Store } from "../../store/store.js";
import { appRunPagesHandler } from "../pages/app-run-pages-handler.js";
import type { RunPagesHandler } from "../../ui/run-pages-server.js";
import type { Answers } from "../handlers/answers.js";
import {
  appDevBoxes,
  executorFromEnv,
  repositoryUpstream,
  type ExecutorPort,
} from "./app-devboxes.js";
import {
  appBase,
  appIntake,
  appServices,
  appSurfaces,
  appWeekly,
  type AppBase,
} from "./app-parts.js";
import type { GitHubAuth } from "../client/github.js";
import type { DeliveryIntake } from "../intake/intake.js";
import type { WeeklyScorecard } from "../surfaces/weekly-scorecard.js";
import { registerInstalledSchedules } from "../handlers/installation.js";
import { RedeliveryReconciler } from "../intake/redelivery.js";
import { RepositoryDiffSource } from "../client/repository-diffs.js";
import type { Schedules } from "../handlers/schedules.js";
import type { AppServices } from "../handlers/services.js";
import type { Surfaces } from "../surfaces/surfaces.js";
import type { AuthSlot } from "./auth-slot.js";
import { handleDelivery } from "../intake/router.js";

export type { ExecutorPort } from "./app-devboxes.js";

/** Where the app logs what it cannot hand to anyone. */
export type AppLog = HostLog;

/** The settings an {@link AppHost} is opened with. */
export interface AppHostOptions {
  /** The embedded store and the DevBoxes' checkouts live here. */
  stateDir: string;
  env: NodeJS.ProcessEnv;
  log: AppLog;
  now?: () => number;
}

/** The parts an {@link AppHost} may be handed instead of making its own. */
export interface AppHostPorts {
  /**
   * The URL of `repo` (owner/name), with a fresh installation token as its credentials when one
   * is given. Default `<GHE_PROTOCOL>://[x-access-token:<token>@]<GHE_HOST>/<repo>.git` (https
   * and github.com unless set). The hub's git route uses it without a token (it sends the token
   * in a header). Tests may point it at a local repository.
   */
  cloneUrl?: (repo: string, token?: string) => string;
  /** The DevBox executor; default the one the environment chooses (see executorFromEnv). */
  executor?: ExecutorPort;
  /** The `clustercode` CLI the default executor's DevBoxes run; default the built one. */
  cliPath?: string;
}

/** The parts of an opened {@link AppHost}. */
interface AppParts {
  core: Host;
  auth: AuthSlot;
  intake: DeliveryIntake;
  surfaces: Surfaces;
  redelivery: RedeliveryReconciler;
  weekly: WeeklyScorecard | undefined;
  services: AppServices;
  runPages: RunPagesHandler | undefined;
  closeStore: () => Promise<void>;
}

/**
 * The GitHub App's process: the ports of the one {@link createHost} root (the embedded store
 * or DynamoDB, the DevBoxes and their hub, surfaces on GitHub, diffs fetched from the
 * repository), plus webhook intake, run starts, answers, schedules and the redelivery
 * reconciler.
 */
export class AppHost {
  readonly intake: DeliveryIntake;
  readonly surfaces: Surfaces;
  readonly schedules: Schedules;
  readonly redelivery: RedeliveryReconciler;
  /** The opt-in weekly judge scorecard comment (CLUSTERCODE_SCORECARD_REPOS). */
  readonly weekly: WeeklyScorecard | undefined;
  readonly services: AppServices;
  /** The run pages, sign-in and their JSON API, when configured (see runPagesFromSettings). */
  readonly runPages: RunPagesHandler | undefined;
  readonly #core: Host;
  readonly #auth: AuthSlot;
  readonly #closeStore: () => Promise<void>;

  private constructor(parts: AppParts) {
    ({ intake: this.intake, surfaces: this.surfaces, redelivery: this.redelivery } = parts);
    ({ weekly: this.weekly, services: this.services, runPages: this.runPages } = parts);
    this.schedules = parts.services.schedules;
    this.#core = parts.core;
    this.#auth = parts.auth;
    this.#closeStore = parts.closeStore;
  }

  /** The store runs, deliveries and schedules live in. */
  get store(): Store {
    return this.#core.store;
  }

  /** The runtime driving runs. */
  get runtime(): Runtime {
    return this.#core.runtime;
  }

  /** Opens the store, starts the hub, and wires the app's parts together (no timers yet). */
  static async open(options: AppHostOptions, ports: AppHostPorts = {}): Promise<AppHost> {
    // Every setting the app reads, decoded once.
    const settings = decodeSettings(options.env);
    const opened = await openStore({ stateDir: options.stateDir, settings: settings.store });
    const base = appBase({ ...options, settings }, opened.store, ports.cloneUrl);
    const { store, now, holder, auth } = base;
    const admission = new Admission({ store, now, holder });
    // The one part made after the surfaces that they ask for (see appSurfaces).
    let answers: Answers | undefined = undefined;
    const surfaces = appSurfaces(base, admission, () => answers);
    // Pushes to a default branch renew the warm DevBoxes of its repository, and the workflows
    // read from it say which to keep before any claim.
    const warm = { moves: new DefaultBranchMoves(), demand: new WarmDemand() };
    const core = await openCore(base, options.stateDir, ports, { admission, surfaces, warm });
    const services = appServices(base, core, warm);
    answers = services.answers;
    const onError = (error: unknown) => base.log.error("background task", error);
    const { pages, installations } = base;
    return new AppHost({
      core,
      auth,
      intake: appIntake(base, services),
      surfaces,
      redelivery: new RedeliveryReconciler({ store, auth: () => auth.get(), holder, now, onError }),
      weekly: appWeekly(base),
      services,
      runPages:
        pages === undefined
          ? undefined
          : appRunPagesHandler({
              config: pages,
              store,
              installations,
              answers,
              now,
              devboxStateDir: options.stateDir,
            }),
      closeStore: () => opened.close(),
    });
  }

  /** Gives the host its GitHub clients (Probot's, once the app is loaded). */
  useAuth(auth: GitHubAuth): void {
    this.#auth.set(auth);
  }

  /** The GitHub clients; a programmer error before {@link useAuth}. */
  githubAuth(): GitHubAuth {
    return this.#auth.get();
  }

  /** Processes one recorded delivery with its installation's client. */
  handle(delivery: DeliveryRecord): Promise<void> {
    return handleDelivery(delivery, this.#auth, this.services);
  }

  /** Where spans and metrics go (nowhere unless an OTEL variable is set). */
  get telemetry(): Telemetry {
    return this.#core.telemetry;
  }

  /** Starts the periodic parts: timers, the delivery sweep, schedules, redelivery. */
  start(): void {
    this.#core.pump.start();
    this.#core.telemetry.gauges({
      intakeDepth: () => this.intake.depth,
      admissionQueue: async () =>
        (await this.#core.store.listActiveRunHeads()).filter((run) => run.status === "queued")
          .length,
    });
    void this.intake.start();
    this.schedules.start();
    this.redelivery.start();
    this.weekly?.start();
  }

  /** Picks up active runs a previous process left (outboxes, lost DevBoxes, surfaces). */
  async recover(): Promise<void> {
    await this.#core.recover("the app process that ran it stopped");
  }

  /** Registers the schedules of every installed repository again (see registerInstalledSchedules). */
  registerSchedules(onError: (error: unknown) => void): Promise<number> {
    return registerInstalledSchedules(this.githubAuth(), this.services, onError);
  }

  /** Waits until deliveries, runs and surface syncs in flight are done. */
  async idle(): Promise<void> {
    await this.intake.idle();
    await this.#core.idle();
    await this.surfaces.idle();
  }

  /** Stops everything this host started. */
  async close(): Promise<void> {
    await this.#core.pump.stop();
    this.intake.stop();
    this.schedules.stop();
    this.redelivery.stop();
    this.weekly?.stop();
    await this.idle();
    await this.#core.close();
    // Stopping the DevBoxes settles their runs: the surfaces those transitions asked for end
    // before the store closes, not against whatever answers for GitHub afterwards.
    await this.surfaces.idle();
    await this.#closeStore();
  }
}

/** The runs' host: the runtime, DevBoxes on the executor port, judges, telemetry. */
async function openCore(
  base: AppBase,
  stateDir: string,
  ports: AppHostPorts,
  parts: {
    admission: Admission;
    surfaces: Surfaces;
    warm: { moves: DefaultBranchMoves; demand: WarmDemand };
  },
): Promise<Host> {
  const { admission, surfaces } = parts;
  const { store, env, log, installations, cloneUrl, notices } = base;
  const warm = {
    source: repositoryUpstream(installations, cloneUrl),
    ...parts.warm,
    // A warm DevBox that could not be made leaves the next claim cold; the log says why.
    onError: (error: unknown) => log.error("warm DevBox", error),
  };
  const executor = ports.executor ?? executorFromEnv(stateDir, env, ports.cliPath, warm);
  return createHost({
    store,
    clock: base.now,
    log,
    judge: judgeFromSettings(base.settings.providers),
    diffs: new RepositoryDiffSource(async (repo) => {
      const { token } = await installations.repoToken(repo);
      return { url: cloneUrl(repo, token), secret: token };
    }),
    holder: base.holder,
    // Replicas share the store: which of them runs a DevBox is a lease in it.
    devboxLeaseMs: base.settings.devboxes.leaseMs,
    ...faultInjection(base.settings.diagnostics.faultAt),
    telemetry: await openTelemetry(env),
    admission,
    surfaces,
    devboxes: (events, requests) =>
      appDevBoxes(
        {
          stateDir,
          env,
          settings: base.settings,
          store,
          installations,
          log,
          cloneUrl,
          executor,
          notices,
        },
        events,
        requests,
      ),
  });
}
