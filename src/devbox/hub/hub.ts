import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { getRequestListener } from "@hono/node-server";
import type { CommandRequest } from "../../engine/commands.js";
import { DevBoxError } from "../errors.js";
import type { DevBoxEvent, DevBoxLostReason } from "./events.js";
import {
  createRecord,
  unknownOutcomeOf,
  wake,
  type DevBoxRecord,
  interruptCommand,
} from "./record.js";
import {
  DEFAULT_MAX_IN_FLIGHT,
  forwardToProvider,
  grantMatches,
  newGrant,
  placeholderEnv,
  refuseUnauthorized,
  refuseUnknownProvider,
  type ProviderUpstream,
} from "./provider-proxy.js";
import { SpendLedger } from "./spend-ledger.js";
import { allowedHosts } from "../../workflow/network-allow.js";
import {
  serveConnect,
  serveForward,
  type EgressGrant,
  type EgressOptions,
} from "./egress-proxy.js";
import { HubGit, type HubGitOptions } from "./git/git-service.js";
import { hubRoutes } from "./routes.js";
import { serveSetupCache, type DevBoxCacheScope } from "./cache/cache-route.js";
import type { SetupCacheStore } from "./cache/cache-store.js";
import { commandRequestSchema, describeIssues } from "../protocol.js";

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
  /** Provider requests a DevBox may have in flight; default {@link DEFAULT_MAX_IN_FLIGHT}. */
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
}

/** `/internal/devboxes/<id>/providers/<name><rest>`: a DevBox's request to a model provider. */
const PROVIDER_PATH = /^\/internal\/devboxes\/([^/]+)\/providers\/([a-z]+)(\/.*)?$/;

/** `/internal/devboxes/<id>/git/<owner>/<repo>.git/<endpoint>`: git smart HTTP of a DevBox. */
const GIT_PATH = /^\/internal\/devboxes\/([^/]+)\/git(\/.*)$/;

/** `/internal/devboxes/<id>/cache<rest>`: a DevBox's setup cache (the rest is checked there). */
const CACHE_PATH = /^\/internal\/devboxes\/([^/?]+)\/cache([/?].*)?$/;

/** How long the hub remembers a released or lost DevBox. */
const FORGET_AFTER_MS = 10 * 60_000;

const DUMMY_TOKEN = Buffer.alloc(64);

/**
 * The runtime's side of the internal DevBox API: issues per-DevBox tokens, queues commands for
 * the agents' long-polls, takes their results and heartbeats, and reports events back.
 */
export class DevBoxHub {
  readonly #options: DevBoxHubOptions;
  readonly #now: () => number;
  readonly #lapseMs: number;
  readonly #startTimeoutMs: number;
  readonly #devboxes = new Map<string, DevBoxRecord>();
  /** Proxied spend by run, across its DevBoxes and commands. */
  readonly #spend = new SpendLedger();
  /** The hosts each DevBox may reach through the egress proxy (unset: the default list). */
  readonly #egress = new Map<string, ReadonlySet<string>>();
  readonly #server: Server;
  readonly #git: HubGit | undefined;
  /** The secret values of each DevBox's run, for the push threat check; never sent anywhere. */
  readonly #secretValues = new Map<string, readonly string[]>();
  #timer: NodeJS.Timeout | undefined;
  #url: string | undefined;

  constructor(options: DevBoxHubOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#lapseMs = options.lapseMs ?? 15_000;
    this.#startTimeoutMs = options.startTimeoutMs ?? 600_000;
    const routes = hubRoutes({
      authenticate: (devboxId, header) => this.#authenticate(devboxId, header),
      onEvent: (event) => this.#options.onEvent(event),
      withProxiedCost: (devboxId, record, result) => {
        const proxiedCostUsd = this.#spend.run(record.runId).takeUnreported(devboxId);
        if (proxiedCostUsd <= 0) return result;
        // The proxy's count is the one the agent cannot understate.
        const costUsd = Math.max(result.costUsd ?? 0, proxiedCostUsd);
        return { ...result, costUsd, proxiedCostUsd };
      },
      onError: (error) => this.#reportError(error),
      now: this.#now,
    });
    // Hono's Request and Response stay out of the process's globals, which the app shares.
    const listener = getRequestListener(routes.fetch, { overrideGlobalObjects: false });
    this.#git = options.git === undefined ? undefined : new HubGit(options.git);
    this.#server = createServer((request, response) => {
      if (/^http:\/\//i.test(request.url ?? "")) {
        void serveForward(request, response, {
          authenticate: (devboxId, token) => this.#egressGrant(devboxId, token),
          options: options.egress ?? {},
        }).catch((error: unknown) => {
          this.#reportError(error);
          response.destroy();
        });
        return;
      }
      const git = GIT_PATH.exec(request.url ?? "");
      if (git !== null) return this.#streamed(response, this.#serveGit(request, response, git));
      const cache = CACHE_PATH.exec(request.url ?? "");
      if (cache !== null) {
        return this.#streamed(response, this.#serveCache(request, response, cache));
      }
      const provider = PROVIDER_PATH.exec(request.url ?? "");
      if (provider === null) void listener(request, response);
      else
        void this.#proxy(request, response, provider).catch((error: unknown) => {
          this.#reportError(error);
          response.destroy();
        });
    });
    this.#server.on("connect", (request: IncomingMessage, socket: Duplex, head: Buffer) => {
      void serveConnect(request, socket, head, {
        authenticate: (devboxId, token) => this.#egressGrant(devboxId, token),
        options: options.egress ?? {},
      }).catch((error: unknown) => {
        this.#reportError(error);
        socket.destroy();
      });
    });
  }

  /**
   * Sets the hosts DevBox `devboxId` may reach through the egress proxy: its workflow's
   * `devbox.network.allow` (undefined: the package registries and the repository's host).
   */
  allowEgress(devboxId: string, allow: readonly string[] | undefined): void {
    this.#record(devboxId);
    this.#egress.set(devboxId, allowedHosts(allow, this.#options.egress?.repositoryHost));
  }

  /**
   * The `HTTPS_PROXY` of DevBox `devboxId`: the hub, with the DevBox's id and its egress key.
   * Commands see it; it opens the allowed network and nothing else (it is not the DevBox's
   * token, which only its agent holds, and does not give it away).
   */
  egressProxyUrl(devboxId: string): string {
    const record = this.#record(devboxId);
    const url = new URL(this.url);
    url.username = encodeURIComponent(devboxId);
    url.password = egressKey(record.token).toString("utf8");
    return url.toString().replace(/\/$/, "");
  }

  #egressGrant(devboxId: string, key: string): EgressGrant | undefined {
    const record = this.#devboxes.get(devboxId);
    const provided = Buffer.from(key, "utf8");
    const expected = egressKey(record?.token ?? DUMMY_TOKEN);
    const equal = provided.length === expected.length && timingSafeEqual(provided, expected);
    if (!equal || record?.state !== "active") return undefined;
    const allowed =
      this.#egress.get(devboxId) ?? allowedHosts(undefined, this.#options.egress?.repositoryHost);
    return { allowed };
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
    for (const record of this.#devboxes.values()) wake(record);
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
  }): {
    token: string;
  } {
    const existing = this.#devboxes.get(input.devboxId);
    if (existing !== undefined) {
      if (existing.runId !== input.runId) {
        throw new DevBoxError("invalid-request", `DevBox ${input.devboxId} belongs to another run`);
      }
      if (existing.state === "released" || existing.state === "lost") {
        throw new DevBoxError("devbox-released", `DevBox ${input.devboxId} was ${existing.state}`);
      }
      return { token: existing.token.toString("utf8") };
    }
    const token = randomBytes(32).toString("hex");
    const record = createRecord(input.runId, token, input.files ?? {}, this.#now());
    this.#devboxes.set(input.devboxId, record);
    this.#secretValues.set(input.devboxId, input.secretValues ?? []);
    return { token };
  }

  /**
   * Sets the repository and branches of DevBox `devboxId`'s setup cache (see
   * `serveSetupCache`): it reads `branch`'s entries, then `baseBranch`'s, and writes only
   * `branch`'s. The runtime says them once, before the DevBox starts; the DevBox never does.
   */
  scopeSetupCache(devboxId: string, scope: DevBoxCacheScope): void {
    this.#record(devboxId).cacheScope = { ...scope };
  }

  /**
   * The environment that stands in for the provider keys among `secrets` that the hub holds:
   * each key variable gets this DevBox's placeholder key and each base URL variable the hub's
   * proxy, which swaps the real key in. The real keys never reach the DevBox.
   */
  providerEnv(devboxId: string, secrets: readonly string[]): Record<string, string> {
    const providers = this.#options.providers ?? [];
    if (!providers.some((provider) => secrets.includes(provider.keyEnv))) return {};
    const record = this.#record(devboxId);
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

  /** Whether this hub serves git (see {@link DevBoxHubOptions.git}). */
  get servesGit(): boolean {
    return this.#git !== undefined;
  }

  /** Queues a command for a DevBox. Idempotent by `commandId`: a known id is not queued again. */
  dispatch(devboxId: string, request: CommandRequest): void {
    const record = this.#record(devboxId);
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
    if (request.command.type === "agent") {
      const room = request.spendLimitUsd;
      this.#spend
        .run(record.runId)
        .allow(
          room === undefined ? undefined : { roomUsd: room, countedUsd: request.proxiedUsd ?? 0 },
        );
    }
    record.pending.push(Object.keys(files).length > 0 ? { ...parsed.data, files } : parsed.data);
    wake(record);
  }

  /** Asks the DevBox to stop command `commandId` (see {@link interruptCommand}). */
  interrupt(devboxId: string, commandId: string): void {
    const record = this.#devboxes.get(devboxId);
    if (record !== undefined) interruptCommand(record, commandId);
  }

  /** Tells the DevBox to exit at its next poll or heartbeat. Safe to call twice or for unknown ids. */
  release(devboxId: string): void {
    const record = this.#devboxes.get(devboxId);
    if (record === undefined || record.state === "released") return;
    record.state = "released";
    record.endedAt = this.#now();
    record.pending = [];
    wake(record);
    this.#forgetGit(devboxId);
  }

  #forgetGit(devboxId: string): void {
    this.#secretValues.delete(devboxId);
    this.#git?.forget(devboxId).catch((error: unknown) => this.#reportError(error));
  }

  /** Reports DevBoxes that stopped heartbeating; the timer calls it, tests may too. */
  checkLapses(): void {
    const now = this.#now();
    for (const [devboxId, record] of this.#devboxes) {
      // An ended DevBox is kept a while to tell its agent to stop, then forgotten, so a
      // long-running app does not keep every DevBox it ever ran.
      if (record.endedAt !== undefined && now - record.endedAt > FORGET_AFTER_MS) {
        this.#devboxes.delete(devboxId);
        this.#spend.retain(new Set([...this.#devboxes.values()].map(({ runId }) => runId)));
        this.#egress.delete(devboxId);
        continue;
      }
      if (record.state !== "active") continue;
      if (record.lastSeenAt !== undefined && now - record.lastSeenAt > this.#lapseMs) {
        this.#lose(devboxId, record, "heartbeat-lapsed");
      } else if (
        record.lastSeenAt === undefined &&
        now - record.registeredAt > this.#startTimeoutMs
      ) {
        this.#lose(devboxId, record, "never-connected");
      }
    }
  }

  #lose(devboxId: string, record: DevBoxRecord, reason: DevBoxLostReason): void {
    const running = unknownOutcomeOf(record);
    record.state = "lost";
    record.endedAt = this.#now();
    record.pending = [];
    wake(record);
    this.#forgetGit(devboxId);
    try {
      this.#options.onEvent({
        type: "devbox.lost",
        devboxId,
        reason,
        ...(running === undefined ? {} : { runningCommandId: running }),
      });
    } catch (error) {
      this.#reportError(error);
    }
  }

  #record(devboxId: string): DevBoxRecord {
    const record = this.#devboxes.get(devboxId);
    if (record === undefined) {
      throw new DevBoxError("unknown-devbox", `DevBox ${devboxId} is not registered`);
    }
    return record;
  }

  #reportError(error: unknown): void {
    if (this.#options.onError !== undefined) this.#options.onError(error);
    else process.stderr.write(`clustercode devbox hub: ${String(error)}\n`);
  }

  /** Forwards a DevBox's provider request when it carries that DevBox's placeholder key. */
  async #proxy(
    request: IncomingMessage,
    response: ServerResponse,
    [, encodedId = "", name = "", rest = "/"]: RegExpExecArray,
  ): Promise<void> {
    let devboxId: string;
    try {
      devboxId = decodeURIComponent(encodedId);
    } catch {
      return refuseUnauthorized(response);
    }
    const record = this.#devboxes.get(devboxId);
    const grant = record?.state === "active" ? record.grant : undefined;
    const header = request.headers["x-api-key"] ?? request.headers.authorization ?? "";
    const provided = String(header).replace(/^Bearer\s+/i, "");
    if (grant === undefined || !grantMatches(grant, provided)) return refuseUnauthorized(response);
    const upstream = this.#options.providers?.find((provider) => provider.name === name);
    if (upstream === undefined) return refuseUnknownProvider(response, name);
    await forwardToProvider(request, response, {
      upstream,
      grant,
      devboxId,
      spend: this.#spend.run(record!.runId),
      maxInFlight: this.#options.maxProviderRequests ?? DEFAULT_MAX_IN_FLIGHT,
      rest,
    });
  }

  /** Serves a DevBox's git request when it carries that DevBox's hub token. */
  async #serveGit(
    request: IncomingMessage,
    response: ServerResponse,
    [, encodedId = "", path = "/"]: RegExpExecArray,
  ): Promise<void> {
    let devboxId: string;
    try {
      devboxId = decodeURIComponent(encodedId);
    } catch {
      return refuseUnauthorized(response);
    }
    const record = this.#authenticate(devboxId, request.headers.authorization);
    if (record?.state !== "active") return refuseUnauthorized(response);
    if (this.#git === undefined) {
      response.writeHead(404, { "content-type": "text/plain" }).end("this hub serves no git\n");
      return;
    }
    record.lastSeenAt = this.#now();
    const caller = {
      devboxId,
      runId: record.runId,
      secretValues: this.#secretValues.get(devboxId) ?? [],
    };
    await this.#git.handle(request, response, caller, path, (refusal) =>
      this.#options.onEvent({ type: "push.refused", ...refusal }),
    );
  }

  /** Reports a streamed route's failure: a 500 when nothing was answered yet, else a cut. */
  #streamed(response: ServerResponse, served: Promise<void>): void {
    served.catch((error: unknown) => {
      this.#reportError(error);
      if (!response.headersSent) response.writeHead(500).end();
      else response.destroy();
    });
  }

  /** Serves a DevBox's setup cache request when it carries that DevBox's hub token. */
  async #serveCache(
    request: IncomingMessage,
    response: ServerResponse,
    [, encodedId = "", rest = ""]: RegExpExecArray,
  ): Promise<void> {
    let devboxId: string;
    try {
      devboxId = decodeURIComponent(encodedId);
    } catch {
      return refuseUnauthorized(response);
    }
    const record = this.#authenticate(devboxId, request.headers.authorization);
    if (record === undefined) return refuseUnauthorized(response);
    if (record.state === "active") record.lastSeenAt = this.#now();
    await serveSetupCache(request, response, this.#options.setupCache, {
      rest,
      scope: record.cacheScope,
      settingUp: record.state === "active" && !record.readyReported,
    });
  }

  /** The record whose token the request carries, or undefined (answer 401 and nothing else). */
  #authenticate(devboxId: string, header: string | undefined): DevBoxRecord | undefined {
    const record = this.#devboxes.get(devboxId);
    const match = /^Bearer ([^\s]+)$/i.exec(header ?? "");
    const provided = Buffer.from(match?.[1] ?? "", "utf8");
    const expected = record?.token ?? DUMMY_TOKEN;
    const equal = provided.length === expected.length && timingSafeEqual(provided, expected);
    return equal ? record : undefined;
  }
}

/** A DevBox's egress key: derived from its token, from which it cannot be turned back. */
function egressKey(token: Buffer): Buffer {
  return Buffer.from(createHmac("sha256", token).update("egress").digest("base64url"), "utf8");
}
