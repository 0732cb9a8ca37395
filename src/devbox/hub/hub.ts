import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { getRequestListener } from "@hono/node-server";
import type { CommandRequest, CommandResult } from "../../engine/commands.js";
import { DevBoxError } from "../errors.js";
import { commandRequestSchema, describeIssues } from "../protocol.js";
import { wake, type DevBoxRecord } from "./record.js";
import type { DevBoxEvent } from "./events.js";
import { newGrant, placeholderEnv, type ProviderUpstream } from "./provider-proxy.js";
import { serveConnect, type EgressOptions } from "./egress-proxy.js";
import {
  HubGit,
  type BranchMove,
  type BranchMoved,
  type GitUpstream,
  type HubGitOptions,
} from "./git/git-service.js";
import { hubRoutes } from "./routes.js";
import type { DevBoxCacheScope } from "./cache/cache-route.js";
import type { SetupCacheStore } from "./cache/cache-store.js";
import type { WarmIdentities } from "../warm-protocol.js";
import { WarmDesk } from "./warm/warm-desk.js";
import { WarmGit } from "./warm/warm-git.js";
import { DevBoxBook } from "./devbox-book.js";
import type { SpendAllowance } from "./spend-ledger.js";
import { serveHubRequest, type HubStreams } from "./devbox-streams.js";

/** How a {@link DevBoxHub} is set up. */
export interface DevBoxHubOptions {
  /** Receives every event; an exception thrown here answers the agent 500, so it retries. */
  onEvent: (event: DevBoxEvent) => void;
  /** Errors the hub cannot answer to anyone (a failing `onEvent` in the lapse timer). */
  onError?: (error: unknown) => void;
  /** Interface to bind; default 127.0.0.1. */
  host?: string;
  /** Port to bind; default 0 (any free port). */
  port?: number;
  /** No heartbeat or poll for this long after the first contact → `devbox.lost`. Default 15000. */
  lapseMs?: number;
  /** No contact at all for this long after `register` → `devbox.lost`. Default 10 minutes. */
  startTimeoutMs?: number;
  /** How often lapses are checked; default a quarter of `lapseMs`, at most one second. */
  checkIntervalMs?: number;
  /** The clock, in milliseconds; default `Date.now`. */
  now?: () => number;
  /**
   * The model providers whose real keys the hub holds and forwards DevBox requests to (see
   * {@link DevBoxHub.providerEnv}); default none.
   */
  providers?: readonly ProviderUpstream[];
  /** Provider requests a DevBox may have in flight; default `DEFAULT_MAX_IN_FLIGHT`. */
  maxProviderRequests?: number | undefined;
  /** The egress proxy: `CONNECT` to the hosts of each DevBox's allow-list (see egress-proxy.ts). */
  egress?: EgressOptions;
  /**
   * Serves git to DevBoxes (see {@link DevBoxHub.gitUrl}): clones and fetches from the run's
   * repository, pushes only to the run's branches after a threat check. Without it the route
   * answers 404.
   */
  git?: HubGitOptions;
  /**
   * Where DevBoxes' setup cache is kept for those that see no cache directory (ECS DevBoxes;
   * see `serveSetupCache`). Without it the cache route answers 404 and they cache nothing.
   */
  setupCache?: SetupCacheStore;
  /**
   * Warm ECS tasks (see warm-protocol.ts): single-use identities that fetch a repository's
   * default branch from `upstreamOf(repo)`, read-only, and wait for their claim. Without it
   * the warm routes answer 401.
   */
  warm?: { stateDir: string; upstreamOf: (repo: string) => Promise<GitUpstream> };
}

/**
 * The runtime's side of the internal DevBox API: issues per-DevBox tokens, queues commands for
 * the agents' long-polls, takes their results and heartbeats, and reports events back. Its book
 * of DevBoxes is devbox-book.ts; its streamed routes (git, cache, providers) devbox-streams.ts.
 */
export class DevBoxHub {
  readonly #options: DevBoxHubOptions;
  readonly #lapseMs: number;
  readonly #book: DevBoxBook;
  readonly #server: Server;
  readonly #git: HubGit | undefined;
  readonly #warm: WarmDesk;
  readonly #warmGit: WarmGit | undefined;
  #timer: NodeJS.Timeout | undefined;
  #url: string | undefined;

  constructor(options: DevBoxHubOptions) {
    this.#options = options;
    const now = options.now ?? Date.now;
    this.#lapseMs = options.lapseMs ?? 15_000;
    const reportError = (error: unknown) => this.#reportError(error);
    this.#git = options.git === undefined ? undefined : new HubGit(options.git);
    this.#book = new DevBoxBook({
      now,
      lapseMs: this.#lapseMs,
      startTimeoutMs: options.startTimeoutMs ?? 600_000,
      repositoryHost: options.egress?.repositoryHost,
      onEvent: (event) => this.#options.onEvent(event),
      reportError,
      forgetGit: (devboxId) => this.#git?.forget(devboxId) ?? Promise.resolve(),
    });
    this.#warm = new WarmDesk(() => this.url, now);
    const { warm } = options;
    this.#warmGit = warm === undefined ? undefined : new WarmGit(warm.stateDir, warm.upstreamOf);
    const streams = this.#streams(now, reportError);
    this.#server = createServer((request, response) => serveHubRequest(streams, request, response));
    this.#server.on("connect", (request: IncomingMessage, socket: Duplex, head: Buffer) => {
      void serveConnect(request, socket, head, {
        authenticate: (devboxId, key) => this.#book.egressGrant(devboxId, key),
        options: options.egress ?? {},
      }).catch((error: unknown) => {
        this.#reportError(error);
        socket.destroy();
      });
    });
  }

  /** What the routes serve with: the agents' JSON API behind the streamed routes. */
  #streams(now: () => number, reportError: (error: unknown) => void): HubStreams {
    const options = this.#options;
    const book = this.#book;
    const routes = hubRoutes({
      authenticate: (devboxId, header) => book.authenticate(devboxId, header),
      onEvent: (event) => options.onEvent(event),
      withProxiedCost: (devboxId, record, reported) => {
        const result = withProxyRefusal(record, reported);
        const proxiedCostUsd = book.spend.run(record.runId).takeUnreported(devboxId);
        if (proxiedCostUsd <= 0) return result;
        // The proxy's count is the one the agent cannot understate.
        const costUsd = Math.max(result.costUsd ?? 0, proxiedCostUsd);
        return { ...result, costUsd, proxiedCostUsd };
      },
      onError: reportError,
      now,
    });
    return {
      book,
      now,
      onEvent: (event) => options.onEvent(event),
      reportError,
      providers: options.providers,
      maxProviderRequests: options.maxProviderRequests,
      egress: options.egress,
      git: this.#git,
      setupCache: options.setupCache,
      warm: this.#warm,
      warmGit: this.#warmGit,
      // Hono's Request and Response stay out of the process's globals, which the app shares.
      listener: getRequestListener(routes.fetch, { overrideGlobalObjects: false }),
    };
  }

  /**
   * Sets the hosts DevBox `devboxId` may reach through the egress proxy: its workflow's
   * `devbox.network.allow` (undefined: the package registries and the repository's host).
   */
  allowEgress(devboxId: string, allow: readonly string[] | undefined): void {
    this.#book.allowEgress(devboxId, allow);
  }

  /**
   * The `HTTPS_PROXY` of DevBox `devboxId`: the hub, with the DevBox's id and its egress key.
   * Commands see it; it opens the allowed network and nothing else (it is not the DevBox's
   * token, which only its agent holds, and does not give it away).
   */
  egressProxyUrl(devboxId: string): string {
    const key = this.#book.egressKeyOf(devboxId);
    const url = new URL(this.url);
    url.username = encodeURIComponent(devboxId);
    url.password = key;
    return url.toString().replace(/\/$/, "");
  }

  /** Starts serving; returns the base URL the agents are given (e.g. `http://127.0.0.1:PORT`). */
  async listen(): Promise<string> {
    if (this.#url !== undefined) return this.#url;
    const host = this.#options.host ?? "127.0.0.1";
    await new Promise<void>((resolve, reject) => {
      this.#server.once("error", reject);
      this.#server.listen(this.#options.port ?? 0, host, () => {
        this.#server.off("error", reject);
        resolve();
      });
    });
    const { port } = this.#server.address() as AddressInfo;
    this.#url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
    const interval = this.#options.checkIntervalMs ?? Math.min(1000, this.#lapseMs / 4);
    this.#timer = setInterval(() => this.checkLapses(), interval);
    this.#timer.unref();
    return this.#url;
  }

  /** The base URL; throws when the hub is not listening. */
  get url(): string {
    if (this.#url === undefined) throw new DevBoxError("hub-closed", "the hub is not listening");
    return this.#url;
  }

  /** Stops serving and drops every open connection (agents then lapse and exit by themselves). */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#url = undefined;
    this.#book.wakeAll();
    this.#warm.close();
    if (!this.#server.listening) return;
    const closed = new Promise<void>((resolve, reject) =>
      this.#server.close((error) => (error === undefined ? resolve() : reject(error))),
    );
    this.#server.closeAllConnections();
    await closed;
  }

  /**
   * Issues the token for a DevBox before it starts. `files` are given to every command of the
   * DevBox (a command's own files win). Registering the same id again for the same run returns
   * the same token.
   */
  register(input: {
    devboxId: string;
    runId: string;
    files?: Record<string, string>;
    /** The values of the run's secrets: a push carrying one is refused. */
    secretValues?: readonly string[];
    /** The run's cost budget as the engine saw it at the claim: held from the first request. */
    spend?: SpendAllowance;
  }): {
    token: string;
  } {
    const { spend, ...registration } = input;
    if (spend !== undefined) this.#book.spend.run(input.runId).allow(spend);
    return this.#book.register(registration);
  }

  /**
   * Sets the repository and branches of DevBox `devboxId`'s setup cache (see
   * `serveSetupCache`): it reads `branch`'s entries, then `baseBranch`'s, and writes only
   * `branch`'s. The runtime says them once, before the DevBox starts; the DevBox never does.
   */
  scopeSetupCache(devboxId: string, scope: DevBoxCacheScope): void {
    this.#book.record(devboxId).cacheScope = { ...scope };
  }

  /**
   * The environment that stands in for the provider keys among `secrets` that the hub holds:
   * each key variable gets this DevBox's placeholder key and each base URL variable the hub's
   * proxy, which swaps the real key in. The real keys never reach the DevBox.
   */
  providerEnv(devboxId: string, secrets: readonly string[]): Record<string, string> {
    const providers = this.#options.providers ?? [];
    if (!providers.some((provider) => secrets.includes(provider.keyEnv))) return {};
    const record = this.#book.record(devboxId);
    record.grant ??= newGrant();
    const base = `${this.url}/internal/devboxes/${encodeURIComponent(devboxId)}/providers`;
    return placeholderEnv(providers, secrets, base, record.grant);
  }

  /**
   * The URL a DevBox clones, fetches and pushes `repo` through: git smart HTTP on this hub,
   * authenticated by the DevBox's own hub token (see {@link hubGitAuthEnv}).
   */
  gitUrl(devboxId: string, repo: string): string {
    const name = /^[A-Za-z0-9._-]+\/[A-Za-z0-9._-]+$/.test(repo)
      ? repo.replace(/\.git$/, "")
      : "local/repository";
    return `${this.url}/internal/devboxes/${encodeURIComponent(devboxId)}/git/${name}.git`;
  }

  /** The warm identities of warm ECS tasks; undefined without {@link DevBoxHubOptions.warm}. */
  get warmIdentities(): WarmIdentities | undefined {
    return this.#warmGit === undefined ? undefined : this.#warm;
  }

  /** Whether this hub serves git (see {@link DevBoxHubOptions.git}). */
  get servesGit(): boolean {
    return this.#git !== undefined;
  }

  /**
   * Points run `runId`'s branch at its race winner's head in the run's repository, with the
   * credentials the hub holds (idempotent, see {@link HubGit.moveBranch}).
   */
  moveBranch(runId: string, move: BranchMove): Promise<BranchMoved> {
    if (this.#git === undefined) {
      throw new DevBoxError("api-not-offered", "this hub serves no git: it moves no branch");
    }
    return this.#git.moveBranch(runId, move);
  }

  /** Queues a command for a DevBox. Idempotent by `commandId`: a known id is not queued again. */
  dispatch(devboxId: string, request: CommandRequest): void {
    const record = this.#book.record(devboxId);
    if (record.state === "released" || record.state === "lost") {
      throw new DevBoxError("devbox-released", `DevBox ${devboxId} was ${record.state}`);
    }
    const parsed = commandRequestSchema.safeParse(request);
    if (!parsed.success) {
      throw new DevBoxError("invalid-request", `invalid command: ${describeIssues(parsed.error)}`);
    }
    if (record.dispatched.has(request.commandId)) return;
    const files = { ...record.files, ...request.files };
    record.dispatched.add(request.commandId);
    // Every command says the budget: a script's provider calls are held to it like an agent's.
    const room = request.spendLimitUsd;
    const counted = request.proxiedUsd ?? 0;
    this.#book.spend
      .run(record.runId)
      .allow(room === undefined ? undefined : { roomUsd: room, countedUsd: counted });
    record.pending.push(Object.keys(files).length > 0 ? { ...parsed.data, files } : parsed.data);
    // Its long poll (or the next) takes it.
    wake(record);
  }

  /** Asks the DevBox to stop command `commandId` (see `interruptCommand`). */
  interrupt(devboxId: string, commandId: string): void {
    this.#book.interrupt(devboxId, commandId);
  }

  /** Tells the DevBox to exit at its next poll or heartbeat. Safe to call twice or for unknown ids. */
  release(devboxId: string): void {
    this.#book.release(devboxId);
  }

  /** Reports DevBoxes that stopped heartbeating; the timer calls it, tests may too. */
  checkLapses(): void {
    this.#book.checkLapses();
  }

  #reportError(error: unknown): void {
    if (this.#options.onError !== undefined) this.#options.onError(error);
    else process.stderr.write(`clustercode devbox hub: ${String(error)}\n`);
  }
}

/**
 * The result with the budget's outright refusal of one of the command's provider requests (see
 * `ProxyGrant.refused`): the command failed for that reason even if its CLI exited 0, so that
 * the node (or race variant) fails saying why instead of losing quietly.
 */
function withProxyRefusal(record: DevBoxRecord, result: CommandResult): CommandResult {
  const refused = record.grant?.refused;
  if (refused === undefined) return result;
  delete record.grant!.refused;
  return {
    ...result,
    exitCode: result.exitCode === 0 ? 1 : result.exitCode,
    refused: `the provider proxy refused a request: ${refused}`,
  };
}
