import type { DevBoxExecutor } from "../devbox/executor.js";
import type { GitUpstream } from "../devbox/hub/git/git-service.js";
import { DevBoxHub } from "../devbox/hub/hub.js";
import { providerUpstreams, type ProxySettings } from "../devbox/hub/provider-proxy.js";
import { RunRepository } from "../store/run-repository.js";
import type { Store } from "../store/store.js";
import { gitPolicyOf } from "./devbox-git.js";
import type { SetupCacheStore } from "../devbox/hub/cache/cache-store.js";
import type { DevBoxPorts } from "./host.js";
import type { DevBoxEventSink } from "./ports.js";
import type { WarmIdentities } from "../devbox/warm-protocol.js";

/**
 * An executor that can stop every DevBox it started (on close), and one that keeps warm tasks
 * with the hub's warm identities (ECS) and stops them on close.
 */
export type ClosableExecutor = DevBoxExecutor & {
  stopAll?: () => Promise<void>;
  attachWarm?: (identities: WarmIdentities, hubUrl: string) => Promise<string[]>;
  stopWarm?: () => Promise<void>;
};

/** What the DevBox side of a host is built from: the app and the CLI differ only in these. */
export interface DevBoxSideOptions {
  /** The hub's staging repositories live under it. */
  stateDir: string;
  env: NodeJS.ProcessEnv;
  /**
   * The DevBoxes' decoded lapse (`CLUSTERCODE_DEVBOX_LAPSE_MS`), the hub's too; default the
   * hub's.
   */
  lapseMs?: number;
  /** The decoded provider keys the hub holds and proxies, and its limit per DevBox. */
  providers: ProxySettings & { providerRequests: number };
  store: Store;
  executor: ClosableExecutor;
  /** Where a run's repository is, with the credentials only the hub adds. */
  upstreamOf: (runId: string) => Promise<GitUpstream>;
  /**
   * Where a repository (`owner/name`) is, for warm ECS tasks to fetch its default branch from
   * the hub before any run claims them; without it no task is kept warm.
   */
  repoUpstreamOf?: (repo: string) => Promise<GitUpstream>;
  onError: (error: unknown) => void;
  /** Where the hub listens (an address DevBoxes reach); default 127.0.0.1 on any port. */
  hubHost?: string;
  hubPort?: number;
  /** The host `github` means in a `devbox.network.allow` list (GitHub Enterprise). */
  repositoryHost?: string;
  /** Where the hub keeps the setup cache of DevBoxes that see no cache directory (ECS). */
  setupCache?: SetupCacheStore;
}

/**
 * The DevBox side of a host, one for the app and the CLI: the executor behind a hub that
 * serves git (DevBoxes clone and push through it), proxies providers and reports to `events`.
 */
export async function openDevBoxSide(
  options: DevBoxSideOptions,
  events: DevBoxEventSink,
): Promise<DevBoxPorts> {
  const { env, store, executor } = options;
  // The lapse the DevBoxes are given is the hub's too, as `clustercode run` has it: a hub on
  // its default would call a DevBox lost sooner or later than the DevBox gives up on the hub.
  const hub = new DevBoxHub({
    onEvent: (event) => events.onHubEvent(event),
    onError: options.onError,
    ...(options.lapseMs === undefined ? {} : { lapseMs: options.lapseMs }),
    ...(options.hubHost === undefined ? {} : { host: options.hubHost }),
    ...(options.hubPort === undefined ? {} : { port: options.hubPort }),
    providers: providerUpstreams(options.providers),
    maxProviderRequests: options.providers.providerRequests,
    ...(options.repositoryHost === undefined
      ? {}
      : { egress: { repositoryHost: options.repositoryHost } }),
    git: {
      stateDir: options.stateDir,
      upstreamOf: options.upstreamOf,
      policyOf: gitPolicyOf(store),
    },
    // ECS DevBoxes see no cache directory: the hub keeps their setup cache.
    ...(options.setupCache === undefined ? {} : { setupCache: options.setupCache }),
    ...(options.repoUpstreamOf === undefined
      ? {}
      : { warm: { stateDir: options.stateDir, upstreamOf: options.repoUpstreamOf } }),
  });
  await hub.listen();
  const identities = hub.warmIdentities;
  // Warm tasks need the hub's address and identities: the executor was made before the hub.
  if (identities !== undefined && executor.attachWarm !== undefined) {
    executor.attachWarm(identities, hub.url).catch(options.onError);
  }
  const runs = new RunRepository(store);
  const source = { env, repositoryOf: async (runId: string) => (await runs.repoOf(runId)) ?? "" };
  const close = async () => {
    await executor.stopAll?.();
    await executor.stopWarm?.();
    await hub.close();
  };
  return { hub, executor, source, close };
}
