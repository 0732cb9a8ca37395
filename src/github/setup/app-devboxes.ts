import { DevBoxHub } from "../../devbox/hub/hub.js";
import { providerRequestLimit, providerUpstreams } from "../../devbox/hub/provider-proxy.js";
import { installationTokenAuthEnv } from "../../devbox/hub/git/git-auth.js";
import { gitPolicyOf } from "../../runtime/devbox-git.js";
import { LocalExecutor } from "../../devbox/local/executor.js";
import { splitDevBoxId } from "../../runtime/devbox-registry.js";
import type { DevBoxPorts } from "../../runtime/host.js";
import type { DevBoxEventSink, HostLog, SurfacesPort } from "../../runtime/ports.js";
import type { Settings } from "../../settings/index.js";
import type { Store } from "../../store/store.js";
import { TokenScrubbingExecutor } from "./clone-source.js";
import { chooseExecutor } from "./executor-choice.js";
import type { Installations } from "../client/installations.js";

/** What the app's DevBoxes are started with. */
export interface AppDevBoxesOptions {
  stateDir: string;
  settings: Settings;
  /** The environment passed on to DevBoxes (allow-listed names, a workflow's named secrets). */
  env: NodeJS.ProcessEnv;
  store: Store;
  installations: Installations;
  log: HostLog;
  /** The URL of `repo` (owner/name) on GitHub, without credentials (the hub adds them). */
  cloneUrl: (repo: string, token?: string) => string;
  cliPath?: string;
  /** What the executor last said about each run's DevBox (ECS placement waits), by run. */
  notices: Map<string, string>;
}

/**
 * The app's DevBox side: the executor the environment chooses (local DevBoxes, or ECS tasks
 * that fetch their token from the hub) and the hub, both reporting to `events`; a notice of
 * the executor is kept for the run's status and its surfaces are requested.
 */
export async function appDevBoxes(
  options: AppDevBoxesOptions,
  events: DevBoxEventSink,
  surfaces: SurfacesPort,
): Promise<DevBoxPorts> {
  const { env, store, installations, notices } = options;
  const choice = await chooseExecutor(
    env,
    () =>
      new LocalExecutor({
        stateDir: options.stateDir,
        env,
        ...(options.cliPath === undefined ? {} : { cliPath: options.cliPath }),
      }),
    (event) => events.onHubEvent(event),
    (devboxId, notice) => {
      const { runId } = splitDevBoxId(devboxId);
      if (notice === undefined) notices.delete(runId);
      else notices.set(runId, notice);
      surfaces.request(runId);
    },
  );
  const { executor } = choice;
  if (executor instanceof TokenScrubbingExecutor) await executor.reap();
  // The lapse the DevBoxes are given is the hub's too, as `clustercode run` has it: a hub on
  // its default would call a DevBox lost sooner or later than the DevBox gives up on the hub.
  const { gheHost } = options.settings.githubApp;
  const hub = new DevBoxHub({
    onEvent: (event) => events.onHubEvent(event),
    onError: (error) => options.log.error("DevBox hub", error),
    lapseMs: options.settings.devboxes.lapseMs,
    host: choice.hubHost,
    port: choice.hubPort,
    providers: providerUpstreams(env),
    maxProviderRequests: providerRequestLimit(env),
    // `github` in a devbox.network.allow list means the GHE host there.
    ...(gheHost === undefined ? {} : { egress: { repositoryHost: gheHost } }),
    // DevBoxes clone and push through the hub, which alone holds the installation token.
    git: {
      stateDir: options.stateDir,
      upstreamOf: async (runId) => {
        const repo = (await store.getRun(runId))?.repo ?? "";
        const { token } = await installations.repoToken(repo);
        return { url: options.cloneUrl(repo), env: installationTokenAuthEnv(token) };
      },
      policyOf: gitPolicyOf(store),
    },
  });
  await hub.listen();
  const source = {
    env,
    repositoryOf: async (runId: string) => (await store.getRun(runId))?.repo ?? "",
  };
  const close = async () => {
    await executor.stopAll?.();
    await hub.close();
  };
  return { hub, executor, source, close };
}
