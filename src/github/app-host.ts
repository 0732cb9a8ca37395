import { DEVBOX_LEASE_MS } from "../runtime/devbox-leases.js";
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { gitHostBaseUrl, repositoryCloneUrl } from "../devbox/git-host.js";
import type { Admission } from "../runtime/admission.js";
import { faultInjection } from "../runtime/fault-injection.js";
import { createHost, type Host } from "../runtime/host.js";
import { openTelemetry, type Telemetry } from "../telemetry/telemetry.js";
import { judgeFromEnv } from "../runtime/judge.js";
import type { HostLog } from "../runtime/ports.js";
import type { Runtime } from "../runtime/runtime.js";
import { openStore } from "../store/embedded.js";
import type { DeliveryRecord, Store } from "../store/store.js";
import { appRunPagesHandler } from "../ui/app-run-pages-handler.js";
import { runPageUrl, runPagesFromEnv } from "../ui/run-pages-config.js";
import type { RunPagesHandler } from "../ui/run-pages-server.js";
import { Answers } from "./answers.js";
import { sendBackIfConflicting } from "./conflicts.js";
import { appDevBoxes } from "./app-devboxes.js";
import type { GitHubAuth } from "./github.js";
import { DeliveryIntake } from "./intake.js";
import { WeeklyScorecard } from "./weekly-scorecard.js";
import { registerInstalledSchedules } from "./handlers/installation.js";
import { Installations } from "./installations.js";
import { RedeliveryReconciler } from "./redelivery.js";
import { RepositoryDiffSource } from "./repository-diffs.js";
import { routeDelivery } from "./router.js";
import { Schedules } from "./schedules.js";
import type { AppServices } from "./services.js";
import { RunStarter } from "./starter.js";
import { Surfaces } from "./surfaces.js";

/** Where the app logs what it cannot hand to anyone. */
export type AppLog = HostLog;

/** How an {@link AppHost} is opened. */
export interface AppHostOptions {
  /** The embedded store and the DevBoxes' checkouts live here. */
  stateDir: string;
  env: NodeJS.ProcessEnv;
  log: AppLog;
  now?: () => number;
  /**
   * The URL of `repo` (owner/name), with a fresh installation token as its credentials when one
   * is given. Default `<GHE_PROTOCOL>://[x-access-token:<token>@]<GHE_HOST>/<repo>.git` (https
   * and github.com unless set). The hub's git route uses it without a token (it sends the token
   * in a header). Tests may point it at a local repository.
   */
  cloneUrl?: (repo: string, token?: string) => string;
  /** The `clustercode` CLI DevBoxes run; default the built one. */
  cliPath?: string;
}

/**
 * The GitHub App's process: the ports of the one {@link createHost} root (the embedded store
 * or DynamoDB, the DevBoxes and their hub, surfaces on GitHub, diffs fetched from the
 * repository), plus webhook intake, run starts, answers, schedules and the redelivery
 * reconciler.
 */
export class AppHost {
  #auth: GitHubAuth | undefined;

  private constructor(
    private readonly core: Host,
    readonly intake: DeliveryIntake,
    readonly surfaces: Surfaces,
    readonly schedules: Schedules,
    readonly redelivery: RedeliveryReconciler,
    /** The opt-in weekly judge scorecard comment (CLUSTERCODE_SCORECARD_REPOS). */
    readonly weekly: WeeklyScorecard | undefined,
    readonly services: AppServices,
    /** The run pages, sign-in and their JSON API, when configured (see runPagesFromEnv). */
    readonly runPages: RunPagesHandler | undefined,
    private readonly closeStore: () => Promise<void>,
  ) {}

  /** The store runs, deliveries and schedules live in. */
  get store(): Store {
    return this.core.store;
  }

  /** The runtime driving runs. */
  get runtime(): Runtime {
    return this.core.runtime;
  }

  /** Opens the store, starts the hub, and wires the app's parts together (no timers yet). */
  static async open(options: AppHostOptions): Promise<AppHost> {
    const now = options.now ?? Date.now;
    const { env, log } = options;
    const holder = `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;
    const opened = await openStore({ stateDir: options.stateDir, env });
    const store = opened.store;
    const box: { host?: AppHost } = {};
    const installations = new Installations(() => opened_(box).githubAuth());
    const gitHost = gitHostBaseUrl(env);
    const cloneUrl =
      options.cloneUrl ??
      ((repo: string, token?: string) => repositoryCloneUrl(gitHost, repo, token));
    const notices = new Map<string, string>();
    const pages = runPagesFromEnv(env);
    // Set but incomplete is a mistake worth saying; unset is the choice of no run pages.
    if (!pages.ok && (env.CLUSTERCODE_PUBLIC_URL ?? "") !== "")
      log.error("run pages are off", new Error(pages.why));
    const pullReady = env.CLUSTERCODE_PR_READY ?? "on-success";
    if (pullReady !== "never" && pullReady !== "on-success")
      log.error(
        "CLUSTERCODE_PR_READY",
        new Error(`must be never or on-success, not "${pullReady}"; using on-success`),
      );
    let surfaces: Surfaces | undefined;
    // Answers exist once the runtime does (after the surfaces); a run succeeds only after that.
    const late: { answers?: Answers } = {};
    const surfacesOf = (admission: Admission) =>
      (surfaces = new Surfaces({
        store,
        holder,
        installations,
        admission,
        onError: (error, runId) => log.error(`surfaces of run ${runId}`, error),
        devboxNotice: (runId) => notices.get(runId),
        pullReady: pullReady === "never" ? "never" : "on-success",
        onSucceeded: async (check) => {
          if (late.answers !== undefined)
            await sendBackIfConflicting(late.answers, { ...check, holder: `sync:${check.runId}` });
        },
        ...(pages.ok
          ? {
              runPageUrl: (repo: string, runId: string) =>
                runPageUrl(pages.config.publicUrl, repo, runId),
            }
          : {}),
      }));
    const core = await createHost({
      store,
      clock: now,
      log,
      judge: judgeFromEnv(env),
      diffs: new RepositoryDiffSource(async (repo) => {
        const { token } = await installations.repoToken(repo);
        return { url: cloneUrl(repo, token), secret: token };
      }),
      holder,
      // Replicas share the store: which of them runs a DevBox is a lease in it.
      devboxLeaseMs: Number(env.CLUSTERCODE_DEVBOX_LEASE_MS ?? "") || DEVBOX_LEASE_MS,
      ...faultInjection(env),
      telemetry: await openTelemetry(env),
      surfaces: surfacesOf,
      devboxes: (events, requests) =>
        appDevBoxes(
          {
            stateDir: options.stateDir,
            env,
            store,
            installations,
            log,
            cloneUrl,
            notices,
            ...(options.cliPath === undefined ? {} : { cliPath: options.cliPath }),
          },
          events,
          requests,
        ),
    });
    if (surfaces === undefined) throw new Error("programmer error: the host made no surfaces");
    const { runtime, admission } = core;
    const starter = new RunStarter({
      store,
      runtime,
      admission,
      now,
      onCreated: (runId) => core.surfaces.request(runId),
    });
    const answers = new Answers({ store, runtime, now });
    late.answers = answers;
    const onError = (error: unknown) => log.error("background task", error);
    const auth = () => opened_(box).githubAuth();
    const schedules = new Schedules({ store, starter, installations, holder, now, onError });
    const services: AppServices = { starter, answers, schedules, installations };
    const intake = new DeliveryIntake({
      store,
      now,
      holder,
      handle: (delivery) => opened_(box).handle(delivery),
      ...(env.CLUSTERCODE_ACK_DEADLINE_MS === undefined
        ? {}
        : { ackDeadlineMs: Number(env.CLUSTERCODE_ACK_DEADLINE_MS) }),
      ...deliverySweepFromEnv(env),
      onError: (error, delivery) =>
        log.error(`delivery ${delivery.deliveryId} (${delivery.event})`, error),
    });
    const redelivery = new RedeliveryReconciler({ store, auth, holder, now, onError });
    const runPages = pages.ok
      ? appRunPagesHandler({
          config: pages.config,
          store,
          installations,
          answers,
          now,
          devboxStateDir: options.stateDir,
        })
      : undefined;
    const scorecardRepos = (env.CLUSTERCODE_SCORECARD_REPOS ?? "")
      .split(",")
      .map((repo) => repo.trim())
      .filter((repo) => repo !== "");
    const weekly =
      scorecardRepos.length === 0
        ? undefined
        : new WeeklyScorecard({
            store,
            installations,
            holder,
            now,
            repos: scorecardRepos,
            onError,
          });
    box.host = new AppHost(
      core,
      intake,
      surfaces,
      schedules,
      redelivery,
      weekly,
      services,
      runPages,
      () => opened.close(),
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
      installation?: { id?: unknown } | null;
      repository?: { full_name?: unknown } | null;
    } | null;
    const id = payload?.installation?.id;
    if (typeof id !== "number" || this.#auth === undefined) return;
    // Read before the payload is checked (routeDelivery refuses a malformed one with why).
    const repo = payload?.repository?.full_name;
    if (typeof repo === "string") this.services.installations.remember(repo, id);
    const gh = await this.#auth.installation(id);
    await routeDelivery(delivery, { gh, deliveryId: delivery.deliveryId, services: this.services });
  }

  /** Where spans and metrics go (nowhere unless an OTEL variable is set). */
  get telemetry(): Telemetry {
    return this.core.telemetry;
  }

  /** Starts the periodic parts: timers, the delivery sweep, schedules, redelivery. */
  start(): void {
    this.core.pump.start();
    this.core.telemetry.gauges({
      intakeDepth: () => this.intake.depth,
      admissionQueue: async () =>
        (await this.core.store.listActiveRunHeads()).filter((run) => run.status === "queued")
          .length,
    });
    void this.intake.start();
    this.schedules.start();
    this.redelivery.start();
    this.weekly?.start();
  }

  /** Picks up active runs a previous process left (outboxes, lost DevBoxes, surfaces). */
  async recover(): Promise<void> {
    await this.core.recover("the app process that ran it stopped");
  }

  /** Registers the schedules of every installed repository again (see registerInstalledSchedules). */
  registerSchedules(onError: (error: unknown) => void): Promise<number> {
    return registerInstalledSchedules(this.githubAuth(), this.services, onError);
  }

  /** Waits until deliveries, runs and surface syncs in flight are done. */
  async idle(): Promise<void> {
    await this.intake.idle();
    await this.core.idle();
    await this.surfaces.idle();
  }

  /** Stops everything this host started. */
  async close(): Promise<void> {
    await this.core.pump.stop();
    this.intake.stop();
    this.schedules.stop();
    this.redelivery.stop();
    this.weekly?.stop();
    await this.idle();
    await this.core.close();
    await this.closeStore();
  }
}

/**
 * CLUSTERCODE_DELIVERY_SWEEP_MS: how often the intake sweeps for deliveries a process left
 * unhandled (default 5 s), and so how soon a replica is taken for gone (three periods) and its
 * deliveries for left (two); the crash tests restart the app within seconds.
 */
function deliverySweepFromEnv(env: NodeJS.ProcessEnv): {
  sweepPeriodMs?: number;
  staleMs?: number;
} {
  const period = Number(env.CLUSTERCODE_DELIVERY_SWEEP_MS ?? "");
  if (env.CLUSTERCODE_DELIVERY_SWEEP_MS === undefined || !(period > 0)) return {};
  return { sweepPeriodMs: period, staleMs: 2 * period };
}

function opened_(box: { host?: AppHost }): AppHost {
  if (box.host === undefined) throw new Error("programmer error: the host is still opening");
  return box.host;
}
