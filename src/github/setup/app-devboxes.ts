import { installationTokenAuthEnv } from "../../devbox/hub/git/git-auth.js";
import type { DevBoxEvent } from "../../devbox/hub/events.js";
import { LocalExecutor } from "../../devbox/local/executor.js";
import { containerExecutor } from "../../devbox/container/executor.js";
import { setupCacheStore } from "../../devbox/hub/cache/store-from-settings.js";
import type { WarmSource } from "../../devbox/local/warm-pool.js";
import type { DefaultBranchMoves } from "../../devbox/branch-moves.js";
import type { WarmDemand } from "../../devbox/warm-demand.js";
import { decodeSettings, type Settings } from "../../settings/index.js";
import { openDevBoxSide } from "../../runtime/devbox-side.js";
import { splitDevBoxId } from "../../runtime/devbox-registry.js";
import type { DevBoxPorts } from "../../runtime/host.js";
import type { DevBoxEventSink, HostLog, SurfacesPort } from "../../runtime/ports.js";
import { RunRepository } from "../../store/run-repository.js";
import type { Store } from "../../store/store.js";
import type { Installations } from "../client/installations.js";
import { TokenScrubbingExecutor } from "./clone-source.js";
import { chooseExecutor, type ExecutorChoice } from "./executor-choice.js";

/**
 * The app's executor port: makes the DevBox executor, told where lost DevBoxes and the
 * executor's notices (ECS placement waits) go. Tests may hand in another executor.
 */
export type ExecutorPort = (hooks: {
  onLost: (event: DevBoxEvent) => void;
  onNotice: (devboxId: string, notice: string | undefined) => void;
}) => Promise<ExecutorChoice>;

const MIB = 1024 * 1024;

/** The executor the environment chooses: local DevBoxes, or ECS tasks. */
export function executorFromEnv(
  stateDir: string,
  env: NodeJS.ProcessEnv,
  cliPath?: string,
  warmFrom?: {
    source: WarmSource;
    moves: DefaultBranchMoves;
    demand?: WarmDemand;
    onError?: (error: unknown) => void;
  },
): ExecutorPort {
  const { devboxes } = decodeSettings(env);
  const warm = warmFrom === undefined ? {} : { warm: { max: devboxes.warmMax, ...warmFrom } };
  const local = () =>
    devboxes.executor === "container"
      ? containerExecutor(stateDir, env, devboxes)
      : new LocalExecutor({
          stateDir,
          env,
          ...(cliPath === undefined ? {} : { cliPath }),
          ...warm,
          sandbox: { unsafe: devboxes.unsafeLocalDevBox, bwrap: devboxes.bwrap },
          setupCacheMaxBytes: devboxes.setupCacheMaxMb * MIB,
        });
  const ecsWarm =
    warmFrom === undefined
      ? undefined
      : {
          max: devboxes.warmMax,
          moves: warmFrom.moves,
          ...(warmFrom.demand === undefined ? {} : { demand: warmFrom.demand }),
          ...(warmFrom.onError === undefined ? {} : { onError: warmFrom.onError }),
        };
  return ({ onLost, onNotice }) =>
    chooseExecutor({ env, devboxes }, local, onLost, onNotice, ecsWarm);
}

/**
 * Where the app's warm DevBoxes clone `repo` from before a run claims them: GitHub, with the
 * installation token in git's environment (the executor's clone, never the DevBox's).
 */
export function repositoryUpstream(
  installations: Installations,
  cloneUrl: (repo: string) => string,
): WarmSource {
  return async (repo) => {
    const { token } = await installations.repoToken(repo);
    return { url: cloneUrl(repo), env: installationTokenAuthEnv(token) };
  };
}

/** What the app's DevBoxes are started with. */
export interface AppDevBoxesOptions {
  stateDir: string;
  env: NodeJS.ProcessEnv;
  /** The settings, decoded once when the app started. */
  settings: Settings;
  store: Store;
  installations: Installations;
  log: HostLog;
  /** The URL of `repo` (owner/name) on GitHub, without credentials (the hub adds them). */
  cloneUrl: (repo: string, token?: string) => string;
  executor: ExecutorPort;
  /** What the executor last said about each run's DevBox (ECS placement waits), by run. */
  notices: Map<string, string>;
}

/**
 * The app's DevBox side: the executor of its port and the hub, both reporting to `events`,
 * the hub holding the installation token; a notice of the executor is kept for the run's
 * status and its surfaces are requested.
 */
export async function appDevBoxes(
  options: AppDevBoxesOptions,
  events: DevBoxEventSink,
  surfaces: SurfacesPort,
): Promise<DevBoxPorts> {
  const { env, store, installations, notices } = options;
  const choice = await options.executor({
    onLost: (event) => events.onHubEvent(event),
    onNotice: (devboxId, notice) => {
      const { runId } = splitDevBoxId(devboxId);
      if (notice === undefined) notices.delete(runId);
      else notices.set(runId, notice);
      surfaces.request(runId);
    },
  });
  const { executor } = choice;
  if (executor instanceof TokenScrubbingExecutor) await executor.reap();
  const runs = new RunRepository(store);
  const upstream = repositoryUpstream(installations, options.cloneUrl);
  return openDevBoxSide(
    {
      stateDir: options.stateDir,
      env,
      lapseMs: options.settings.devboxes.lapseMs,
      providers: options.settings.providers,
      store,
      executor,
      onError: (error) => options.log.error("DevBox hub", error),
      hubHost: choice.hubHost,
      hubPort: choice.hubPort,
      // `github` in a devbox.network.allow list means the GHE host there.
      ...(env.GHE_HOST === undefined ? {} : { repositoryHost: env.GHE_HOST }),
      // ECS DevBoxes keep their setup cache through the hub: on this host, or in the bucket.
      setupCache: setupCacheStore(options.stateDir, options.settings),
      // Warm ECS tasks fetch default branches through the hub, which alone holds the token.
      repoUpstreamOf: upstream,
      // DevBoxes clone and push through the hub, which alone holds the installation token.
      upstreamOf: async (runId) => upstream((await runs.repoOf(runId)) ?? ""),
    },
    events,
  );
}
