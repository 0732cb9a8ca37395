import type { DefaultBranchMoves } from "../../devbox/branch-moves.js";
import type { WarmDemand } from "../../devbox/warm-demand.js";
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { gitHostBaseUrl, repositoryCloneUrl } from "../../devbox/git-host.js";
import type { Admission } from "../../runtime/admission.js";
import type { Host } from "../../runtime/host.js";
import type { HostLog } from "../../runtime/ports.js";
import type { Settings } from "../../settings/index.js";
import type { Store } from "../../store/store.js";
import {
  runPageUrl,
  runPagesFromSettings,
  type RunPagesConfig,
} from "../../ui/run-pages-config.js";
import { Installations } from "../client/installations.js";
import { Answers } from "../handlers/answers.js";
import { sendBackIfConflicting } from "../handlers/conflicts.js";
import { Schedules } from "../handlers/schedules.js";
import type { AppServices } from "../handlers/services.js";
import { RunStarter } from "../handlers/starter.js";
import { DeliveryIntake } from "../intake/intake.js";
import { Surfaces } from "../surfaces/surfaces.js";
import { WeeklyScorecard } from "../surfaces/weekly-scorecard.js";
import { AuthSlot } from "./auth-slot.js";
import { handleDelivery } from "../intake/router.js";

/** What every part of the app is built with. */
export interface AppBase {
  store: Store;
  env: NodeJS.ProcessEnv;
  /** `env` decoded, once, when the app opens. */
  settings: Settings;
  log: HostLog;
  now: () => number;
  /** This replica, as leases name their holder. */
  holder: string;
  auth: AuthSlot;
  installations: Installations;
  /** See `AppHostPorts.cloneUrl`. */
  cloneUrl: (repo: string, token?: string) => string;
  /** What the DevBox executor last said about each run's DevBox, by run. */
  notices: Map<string, string>;
  /** The run pages' configuration, when they are on. */
  pages: RunPagesConfig | undefined;
}

/** The app's base parts, from the environment; a set but incomplete setting is logged. */
export function appBase(
  options: { env: NodeJS.ProcessEnv; settings: Settings; log: HostLog; now?: () => number },
  store: Store,
  cloneUrl?: (repo: string, token?: string) => string,
): AppBase {
  const { env, settings, log } = options;
  const auth = new AuthSlot();
  const gitHost = gitHostBaseUrl(env);
  const pages = runPagesFromSettings(settings.runPages, settings.githubApp.gheHost);
  // Set but incomplete is a mistake worth saying; unset is the choice of no run pages.
  if (!pages.ok && settings.runPages.publicUrl !== undefined)
    log.error("run pages are off", new Error(pages.why));
  return {
    store,
    env,
    settings,
    log,
    now: options.now ?? Date.now,
    holder: `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`,
    auth,
    installations: new Installations(() => auth.get()),
    cloneUrl: cloneUrl ?? ((repo, token) => repositoryCloneUrl(gitHost, repo, token)),
    notices: new Map(),
    pages: pages.ok ? pages.config : undefined,
  };
}

/**
 * The app's surfaces on GitHub. A succeeded run's pull request is checked against its base
 * by the answers, which exist only once the runtime does (after the surfaces): they are
 * asked for when a run succeeds, which happens only after that.
 */
export function appSurfaces(
  base: AppBase,
  admission: Admission,
  answers: () => Answers | undefined,
): Surfaces {
  const { log, pages } = base;
  return new Surfaces({
    store: base.store,
    holder: base.holder,
    installations: base.installations,
    admission,
    onError: (error, runId) => log.error(`surfaces of run ${runId}`, error),
    devboxNotice: (runId) => base.notices.get(runId),
    pullReady: base.settings.githubApp.prReady,
    onSucceeded: async (check) => {
      const ready = answers();
      if (ready !== undefined)
        await sendBackIfConflicting(ready, { ...check, holder: `sync:${check.runId}` });
    },
    ...(pages === undefined
      ? {}
      : { runPageUrl: (repo: string, runId: string) => runPageUrl(pages.publicUrl, repo, runId) }),
  });
}

/**
 * Run starts, answers and schedules over the host's runtime; what the default branches say
 * about warm DevBoxes (pushes that move them, workflows that ask for them) goes to `warm`.
 */
export function appServices(
  base: AppBase,
  core: Host,
  warm: { moves?: DefaultBranchMoves; demand?: WarmDemand } = {},
): AppServices {
  const { store, now, holder, installations } = base;
  const { runtime, admission } = core;
  const onCreated = (runId: string) => core.surfaces.request(runId);
  const starter = new RunStarter({ store, runtime, admission, now, onCreated });
  const answers = new Answers({ store, runtime, now });
  const onError = (error: unknown) => base.log.error("background task", error);
  const schedules = new Schedules({ store, starter, installations, holder, now, onError });
  const { moves, demand } = warm;
  const moved =
    moves === undefined ? {} : { defaultBranchMoved: (repo: string) => moves.moved(repo) };
  const declared = demand === undefined ? {} : { warmDemand: demand };
  return { starter, answers, schedules, installations, ...moved, ...declared };
}

/** The webhook intake, handing recorded deliveries to the services. */
export function appIntake(base: AppBase, services: AppServices): DeliveryIntake {
  const { log } = base;
  const { ackDeadlineMs, deliverySweepMs } = base.settings.githubApp;
  return new DeliveryIntake({
    store: base.store,
    now: base.now,
    holder: base.holder,
    handle: (delivery) => handleDelivery(delivery, base.auth, services),
    ackDeadlineMs,
    // How often the intake sweeps for deliveries a process left unhandled, and so how soon a
    // replica is taken for gone (five periods) and its deliveries for left (two); the crash
    // tests restart the app within seconds.
    sweepPeriodMs: deliverySweepMs,
    staleMs: 2 * deliverySweepMs,
    onError: (error, delivery) =>
      log.error(`delivery ${delivery.deliveryId} (${delivery.event})`, error),
  });
}

/** The opt-in weekly judge scorecard comment (CLUSTERCODE_SCORECARD_REPOS). */
export function appWeekly(base: AppBase): WeeklyScorecard | undefined {
  const repos = base.settings.githubApp.scorecardRepos;
  if (repos.length === 0) return undefined;
  const { store, installations, holder, now } = base;
  const onError = (error: unknown) => base.log.error("background task", error);
  return new WeeklyScorecard({ store, installations, holder, now, repos, onError });
}
