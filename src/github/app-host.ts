import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { DevBoxHub } from "../devbox/hub/hub.js";
import { gitHostBaseUrl, repositoryCloneUrl } from "../devbox/git-host.js";
import { LocalExecutor } from "../devbox/local/executor.js";
import { DevBoxEffects, splitDevBoxId } from "../runtime/effects.js";
import { judgeFromEnv } from "../runtime/judge.js";
import { Runtime } from "../runtime/runtime.js";
import { TimerPump } from "../runtime/timer-pump.js";
import { openStore } from "../store/embedded.js";
import type { DeliveryRecord, Store } from "../store/store.js";
import { appRunPagesHandler } from "../ui/app-run-pages-handler.js";
import { runPageUrl, runPagesFromEnv } from "../ui/run-pages-config.js";
import type { RunPagesHandler } from "../ui/run-pages-server.js";
import { Admission } from "./admission.js";
import { Answers } from "./answers.js";
import { TokenScrubbingExecutor } from "./clone-source.js";
import { chooseExecutor } from "./executor-choice.js";
import type { GitHubAuth } from "./github.js";
import { DeliveryIntake } from "./intake.js";
import { registerInstalledSchedules } from "./handlers/installation.js";
import { Installations } from "./installations.js";
import { RedeliveryReconciler } from "./redelivery.js";
import { recoverRuns, settleTransition } from "./recovery.js";
import { routeDelivery } from "./router.js";
import { Schedules } from "./schedules.js";
import type { AppServices } from "./services.js";
import { RunStarter } from "./starter.js";
import { Surfaces } from "./surfaces.js";

/** Where the app logs what it cannot hand to anyone. */
export interface AppLog {
  error(message: string, error: unknown): void;
}

/** How an {@link AppHost} is opened. */
export interface AppHostOptions {
  /** The embedded store and the DevBoxes' checkouts live here. */
  stateDir: string;
  env: NodeJS.ProcessEnv;
  log: AppLog;
  now?: () => number;
  /**
   * What a DevBox clones for `repo` (owner/name) given a fresh installation token. Default
   * `<GHE_PROTOCOL>://x-access-token:<token>@<GHE_HOST>/<repo>.git` (https and github.com
   * unless set). Tests may point it at a local repository.
   */
  cloneUrl?: (repo: string, token: string) => string;
  /** The `clustercode` CLI DevBoxes run; default the built one. */
  cliPath?: string;
}

/**
 * The GitHub App's process: the embedded store (or DynamoDB), the internal DevBox API, local
 * DevBoxes, the runtime and timer pump (as the CLI's LocalHost), plus webhook intake, run
 * starts, answers, surfaces, schedules and the redelivery reconciler.
 */
export class AppHost {
  #auth: GitHubAuth | undefined;

  private constructor(
    readonly store: Store,
    readonly runtime: Runtime,
    readonly intake: DeliveryIntake,
    readonly surfaces: Surfaces,
    readonly schedules: Schedules,
    readonly redelivery: RedeliveryReconciler,
    readonly services: AppServices,
    /** The run pages, sign-in and their JSON API, when configured (see runPagesFromEnv). */
    readonly runPages: RunPagesHandler | undefined,
    private readonly effects: DevBoxEffects,
    private readonly admission: Admission,
    private readonly pump: TimerPump,
    private readonly closers: (() => Promise<void>)[],
    private readonly now: () => number,
  ) {}

  /** Opens the store, starts the hub, and wires the app's parts together (no timers yet). */
  static async open(options: AppHostOptions): Promise<AppHost> {
    const now = options.now ?? Date.now;
    const { env, log } = options;
    const holder = `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;
    const opened = await openStore({ stateDir: options.stateDir, env });
    const store = opened.store;
    // What the executor last said about each run's DevBox (ECS placement waits), for its status.
    const notices = new Map<string, string>();
    const choice = await chooseExecutor(
      env,
      () =>
        new LocalExecutor({
          stateDir: options.stateDir,
          env,
          ...(options.cliPath === undefined ? {} : { cliPath: options.cliPath }),
        }),
      (event) => effects.onHubEvent(event),
      (devboxId, notice) => {
        const { runId } = splitDevBoxId(devboxId);
        if (notice === undefined) notices.delete(runId);
        else notices.set(runId, notice);
        surfaces.request(runId);
      },
    );
    const { executor } = choice;
    if (executor instanceof TokenScrubbingExecutor) await executor.reap();
    const box: { host?: AppHost } = {};
    const auth = (): GitHubAuth => {
      if (box.host === undefined) throw new Error("programmer error: the host is still opening");
      return box.host.githubAuth();
    };
    const installations = new Installations(auth);
    const hub = new DevBoxHub({
      onEvent: (event) => effects.onHubEvent(event),
      onError: (error) => log.error("DevBox hub", error),
      host: choice.hubHost,
      port: choice.hubPort,
      // DevBoxes refresh their git token here (the same narrowed token as the clone's).
      repoToken: async (runId) => installations.repoToken((await store.getRun(runId))?.repo ?? ""),
    });
    await hub.listen();
    const gitHost = gitHostBaseUrl(env);
    const cloneUrl =
      options.cloneUrl ??
      ((repo: string, token: string) => repositoryCloneUrl(gitHost, repo, token));
    const effects: DevBoxEffects = new DevBoxEffects({
      store,
      hub,
      executor,
      judge: judgeFromEnv(env),
      source: {
        env,
        // The token is minted at claim time and travels only to the executor's clone.
        repositoryOf: async (runId) => {
          const repo = (await store.getRun(runId))?.repo ?? "";
          if (choice.tokenFromHub) return repo;
          return cloneUrl(repo, (await installations.repoToken(repo)).token);
        },
      },
      deliver: (runId, event) =>
        void runtime
          .deliver(runId, event)
          .catch((error: unknown) => log.error(`run ${runId}`, error)),
      now,
    });
    const runtime: Runtime = new Runtime({
      store,
      performer: effects,
      now,
      onTransition: (run) => settleTransition(run, { store, surfaces, admission, log }),
    });
    const admission = new Admission({ store, runtime, now, holder });
    const pages = runPagesFromEnv(env);
    // Set but incomplete is a mistake worth saying; unset is the choice of no run pages.
    if (!pages.ok && (env.CLUSTERCODE_PUBLIC_URL ?? "") !== "")
      log.error("run pages are off", new Error(pages.why));
    const surfaces = new Surfaces({
      store,
      installations,
      admission,
      onError: (error, runId) => log.error(`surfaces of run ${runId}`, error),
      devboxNotice: (runId) => notices.get(runId),
      ...(pages.ok
        ? {
            runPageUrl: (repo: string, runId: string) =>
              runPageUrl(pages.config.publicUrl, repo, runId),
          }
        : {}),
    });
    const starter = new RunStarter({
      store,
      runtime,
      admission,
      now,
      onCreated: (runId) => surfaces.request(runId),
    });
    const answers = new Answers({ store, runtime, now });
    const onError = (error: unknown) => log.error("background task", error);
    const schedules = new Schedules({ store, starter, installations, holder, now, onError });
    const services: AppServices = { starter, answers, schedules, installations };
    const intake = new DeliveryIntake({
      store,
      now,
      holder,
      handle: (delivery) => opened_(box).handle(delivery),
      onError: (error, delivery) =>
        log.error(`delivery ${delivery.deliveryId} (${delivery.event})`, error),
    });
    const redelivery = new RedeliveryReconciler({ store, auth, holder, now, onError });
    const pump = new TimerPump({ store, runtime, now, onError });
    const closers = [
      async () => {
        await executor.stopAll?.();
      },
      () => hub.close(),
      () => opened.close(),
    ];
    box.host = new AppHost(
      store,
      runtime,
      intake,
      surfaces,
      schedules,
      redelivery,
      services,
      pages.ok
        ? appRunPagesHandler({ config: pages.config, store, installations, answers, now })
        : undefined,
      effects,
      admission,
      pump,
      closers,
      now,
    );
    return box.host;
  }

  /** Gives the host its GitHub clients (Probot's, once the app is loaded). */
  useAuth(auth: GitHubAuth): void {
    this.#auth = auth;
  }

  /** The GitHub clients; a programmer error before {@link useAuth}. */
  githubAuth(): GitHubAuth {
    if (this.#auth === undefined)
      throw new Error("programmer error: the app has not attached GitHub auth");
    return this.#auth;
  }

  /** Processes one recorded delivery with its installation's client. */
  async handle(delivery: DeliveryRecord): Promise<void> {
    const payload = delivery.payload as {
      installation?: { id: number };
      repository?: { full_name: string };
    };
    const id = payload.installation?.id;
    if (id === undefined || this.#auth === undefined) return;
    if (payload.repository !== undefined)
      this.services.installations.remember(payload.repository.full_name, id);
    const gh = await this.#auth.installation(id);
    await routeDelivery(delivery, { gh, deliveryId: delivery.deliveryId, services: this.services });
  }

  /** Starts the periodic parts: timers, the delivery sweep, schedules, redelivery. */
  start(): void {
    this.pump.start();
    void this.intake.start();
    this.schedules.start();
    this.redelivery.start();
  }

  /** Picks up active runs a previous process left (outboxes, lost DevBoxes, surfaces). */
  async recover(): Promise<void> {
    await recoverRuns({
      store: this.store,
      runtime: this.runtime,
      effects: this.effects,
      surfaces: this.surfaces,
      admission: this.admission,
      now: this.now,
    });
  }

  /** Registers the schedules of every installed repository again (see registerInstalledSchedules). */
  registerSchedules(onError: (error: unknown) => void): Promise<number> {
    return registerInstalledSchedules(this.githubAuth(), this.services, onError);
  }

  /** Waits until deliveries, runs and surface syncs in flight are done. */
  async idle(): Promise<void> {
    await this.intake.idle();
    await this.runtime.idle();
    await this.surfaces.idle();
  }

  /** Stops everything this host started. */
  async close(): Promise<void> {
    await this.pump.stop();
    this.intake.stop();
    this.schedules.stop();
    this.redelivery.stop();
    await this.idle();
    for (const close of this.closers) await close();
  }
}

function opened_(box: { host?: AppHost }): AppHost {
  if (box.host === undefined) throw new Error("programmer error: the host is still opening");
  return box.host;
}
