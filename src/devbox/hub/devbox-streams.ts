import type { IncomingMessage, ServerResponse } from "node:http";
import { serveSetupCache } from "./cache/cache-route.js";
import type { SetupCacheStore } from "./cache/cache-store.js";
import type { DevBoxBook } from "./devbox-book.js";
import { serveForward, type EgressOptions } from "./egress-proxy.js";
import type { DevBoxEvent } from "./events.js";
import type { HubGit } from "./git/git-service.js";
import {
  DEFAULT_MAX_IN_FLIGHT,
  forwardToProvider,
  grantMatches,
  refuseUnauthorized,
  refuseUnknownProvider,
  type ProviderUpstream,
} from "./provider-proxy.js";
import type { WarmDesk } from "./warm/warm-desk.js";
import type { WarmGit } from "./warm/warm-git.js";
import { isWarmRoute, serveWarm } from "./warm/warm-routes.js";

/** `/internal/devboxes/<id>/providers/<name><rest>`: a DevBox's request to a model provider. */
const PROVIDER_PATH = /^\/internal\/devboxes\/([^/]+)\/providers\/([a-z]+)(\/.*)?$/;

/** `/internal/devboxes/<id>/git/<owner>/<repo>.git/<endpoint>`: git smart HTTP of a DevBox. */
const GIT_PATH = /^\/internal\/devboxes\/([^/]+)\/git(\/.*)$/;

/** `/internal/devboxes/<id>/cache<rest>`: a DevBox's setup cache (the rest is checked there). */
const CACHE_PATH = /^\/internal\/devboxes\/([^/?]+)\/cache([/?].*)?$/;

/** What the hub's streamed routes are served with. */
export interface HubStreams {
  book: DevBoxBook;
  now: () => number;
  onEvent: (event: DevBoxEvent) => void;
  reportError: (error: unknown) => void;
  providers: readonly ProviderUpstream[] | undefined;
  maxProviderRequests: number | undefined;
  egress: EgressOptions | undefined;
  git: HubGit | undefined;
  setupCache: SetupCacheStore | undefined;
  warm: WarmDesk;
  warmGit: WarmGit | undefined;
  /** The JSON API of the agents (see routes.ts), for every other request. */
  listener: (request: IncomingMessage, response: ServerResponse) => Promise<void>;
}

/**
 * Routes one request to the hub: warm tasks, egress forwarding, git, the setup cache, provider
 * proxying, else the agents' API. Each DevBox route authenticates its DevBox itself.
 */
export function serveHubRequest(
  hub: HubStreams,
  request: IncomingMessage,
  response: ServerResponse,
): void {
  const url = request.url ?? "";
  if (isWarmRoute(url)) {
    return streamed(hub, response, serveWarm(request, response, hub.warm, hub.warmGit));
  }
  if (/^http:\/\//i.test(url)) {
    const authenticate = (devboxId: string, key: string) => hub.book.egressGrant(devboxId, key);
    void serveForward(request, response, { authenticate, options: hub.egress ?? {} }).catch(
      (error: unknown) => {
        hub.reportError(error);
        response.destroy();
      },
    );
    return;
  }
  const git = GIT_PATH.exec(url);
  if (git !== null) return streamed(hub, response, serveGit(hub, request, response, git));
  const cache = CACHE_PATH.exec(url);
  if (cache !== null) return streamed(hub, response, serveCache(hub, request, response, cache));
  const provider = PROVIDER_PATH.exec(url);
  if (provider === null) void hub.listener(request, response);
  else
    void proxy(hub, request, response, provider).catch((error: unknown) => {
      hub.reportError(error);
      response.destroy();
    });
}

/** Reports a streamed route's failure: a 500 when nothing was answered yet, else a cut. */
function streamed(hub: HubStreams, response: ServerResponse, served: Promise<void>): void {
  served.catch((error: unknown) => {
    hub.reportError(error);
    if (!response.headersSent) response.writeHead(500).end();
    else response.destroy();
  });
}

/** The DevBox id of a route, or undefined when its encoding is broken (answer 401). */
function devboxIdOf(encodedId: string): string | undefined {
  try {
    return decodeURIComponent(encodedId);
  } catch {
    return undefined;
  }
}

/** Forwards a DevBox's provider request when it carries that DevBox's placeholder key. */
async function proxy(
  hub: HubStreams,
  request: IncomingMessage,
  response: ServerResponse,
  [, encodedId = "", name = "", rest = "/"]: RegExpExecArray,
): Promise<void> {
  const devboxId = devboxIdOf(encodedId);
  if (devboxId === undefined) return refuseUnauthorized(response);
  const record = hub.book.get(devboxId);
  const grant = record?.state === "active" ? record.grant : undefined;
  const header = request.headers["x-api-key"] ?? request.headers.authorization ?? "";
  const provided = String(header).replace(/^Bearer\s+/i, "");
  if (grant === undefined || !grantMatches(grant, provided)) return refuseUnauthorized(response);
  const upstream = hub.providers?.find((provider) => provider.name === name);
  if (upstream === undefined) return refuseUnknownProvider(response, name);
  await forwardToProvider(request, response, {
    upstream,
    grant,
    devboxId,
    spend: hub.book.spend.run(record!.runId),
    maxInFlight: hub.maxProviderRequests ?? DEFAULT_MAX_IN_FLIGHT,
    rest,
  });
}

/** Serves a DevBox's git request when it carries that DevBox's hub token. */
async function serveGit(
  hub: HubStreams,
  request: IncomingMessage,
  response: ServerResponse,
  [, encodedId = "", path = "/"]: RegExpExecArray,
): Promise<void> {
  const devboxId = devboxIdOf(encodedId);
  if (devboxId === undefined) return refuseUnauthorized(response);
  const record = hub.book.authenticate(devboxId, request.headers.authorization);
  if (record?.state !== "active") return refuseUnauthorized(response);
  if (hub.git === undefined) {
    response.writeHead(404, { "content-type": "text/plain" }).end("this hub serves no git\n");
    return;
  }
  record.lastSeenAt = hub.now();
  const caller = { devboxId, runId: record.runId, secretValues: hub.book.secretValuesOf(devboxId) };
  await hub.git.handle(request, response, caller, path, (refusal) =>
    hub.onEvent({ type: "push.refused", ...refusal }),
  );
}

/** Serves a DevBox's setup cache request when it carries that DevBox's hub token. */
async function serveCache(
  hub: HubStreams,
  request: IncomingMessage,
  response: ServerResponse,
  [, encodedId = "", rest = ""]: RegExpExecArray,
): Promise<void> {
  const devboxId = devboxIdOf(encodedId);
  if (devboxId === undefined) return refuseUnauthorized(response);
  const record = hub.book.authenticate(devboxId, request.headers.authorization);
  if (record === undefined) return refuseUnauthorized(response);
  if (record.state === "active") record.lastSeenAt = hub.now();
  await serveSetupCache(request, response, hub.setupCache, {
    rest,
    scope: record.cacheScope,
    settingUp: record.state === "active" && !record.readyReported,
  });
}
