import { lookup } from "node:dns/promises";
import { request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import { connect, isIP, type Socket } from "node:net";
import type { Duplex } from "node:stream";
import { isInternalAddress } from "./internal-address.js";

/** Where a CONNECT goes once allowed: the address and port to open. */
export interface EgressTarget {
  host: string;
  port: number;
}

/** How the hub's egress proxy reaches the hosts it allows. */
export interface EgressOptions {
  /** The repository's host (`github` in an allow-list means it); default github.com. */
  repositoryHost?: string;
  /** Ports a DevBox may CONNECT to; default 443 only. */
  ports?: readonly number[];
  /**
   * Resolves an allowed host to the address to open. Default: DNS, refusing a name when any of
   * its addresses is loopback, private, link-local or otherwise internal (no reaching the task
   * metadata or the VPC through a name that points inside).
   */
  resolve?: (host: string, port: number) => Promise<EgressTarget>;
}

/** A DevBox that presented its credentials: the hosts it may reach. */
export interface EgressGrant {
  allowed: ReadonlySet<string>;
}

/** Refused: the address a name resolved to is internal. */
export class InternalAddressError extends Error {
  constructor(host: string, address: string) {
    super(`${host} resolves to ${address}, an internal address`);
    this.name = "InternalAddressError";
  }
}

/** Every address a name resolves to (DNS answers with all of them, not only the first). */
export type LookupAll = (host: string) => Promise<readonly { address: string }[]>;

const lookupAll: LookupAll = (host) => lookup(host, { all: true });

/**
 * DNS, then a refusal when ANY address the name resolves to is internal (see
 * `isInternalAddress`): a name that answers one public and one internal address could otherwise
 * be opened on either. The target is the first address, checked, so the tunnel goes where the
 * check looked and a second lookup cannot rebind it.
 */
export async function resolvePublic(
  host: string,
  port: number,
  lookupAddresses: LookupAll = lookupAll,
): Promise<EgressTarget> {
  const addresses = isIP(host)
    ? [host]
    : (await lookupAddresses(host)).map((answer) => answer.address);
  const internal = addresses.find(isInternalAddress);
  if (internal !== undefined) throw new InternalAddressError(host, internal);
  const [address] = addresses;
  if (address === undefined) throw new Error(`${host} did not resolve`);
  return { host: address, port };
}

/** `host:port` of a CONNECT request line; undefined when it is not one. */
export function parseAuthority(target: string | undefined): EgressTarget | undefined {
  const match = /^([a-z0-9.-]+):(\d{1,5})$/i.exec(target ?? "");
  if (match === null) return undefined;
  const port = Number(match[2]);
  return port > 0 && port < 65536 ? { host: (match[1] ?? "").toLowerCase(), port } : undefined;
}

/** The DevBox id and token of a `Proxy-Authorization: Basic` header (HTTPS_PROXY's userinfo). */
export function proxyCredentials(
  header: string | undefined,
): { devboxId: string; token: string } | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(header ?? "");
  if (match === null) return undefined;
  const decoded = Buffer.from(match[1] ?? "", "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon <= 0) return undefined;
  try {
    return {
      devboxId: decodeURIComponent(decoded.slice(0, colon)),
      token: decodeURIComponent(decoded.slice(colon + 1)),
    };
  } catch {
    return undefined;
  }
}

function answer(socket: Duplex, status: string, message: string, headers: string[] = []): void {
  const body = `${message}\n`;
  socket.end(
    [
      `HTTP/1.1 ${status}`,
      "content-type: text/plain; charset=utf-8",
      `content-length: ${Buffer.byteLength(body)}`,
      "connection: close",
      ...headers,
      "",
      body,
    ].join("\r\n"),
  );
}

/** What the proxy's handlers need: who a DevBox is, and where it may go. */
export interface EgressDeps {
  authenticate: (devboxId: string, token: string) => EgressGrant | undefined;
  options: EgressOptions;
}

/** The grant of the DevBox whose credentials the request carries; undefined without them. */
function grantOf(req: IncomingMessage, deps: EgressDeps): EgressGrant | undefined {
  const credentials = proxyCredentials(req.headers["proxy-authorization"]);
  return credentials === undefined
    ? undefined
    : deps.authenticate(credentials.devboxId, credentials.token);
}

/** Opens the tunnel of an allowed CONNECT: 200, then bytes both ways until either side closes. */
function openTunnel(client: Duplex, head: Buffer, host: string, address: EgressTarget): void {
  const upstream: Socket = connect(address.port, address.host);
  upstream.once("error", () => {
    if (!client.writableEnded)
      answer(client, "502 Bad Gateway", `clustercode egress: ${host} did not answer`);
    upstream.destroy();
  });
  upstream.once("connect", () => {
    upstream.removeAllListeners("error");
    upstream.on("error", () => client.destroy());
    client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
    if (head.length > 0) upstream.write(head);
    upstream.pipe(client);
    client.pipe(upstream);
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
}

/**
 * Serves one `CONNECT host:port` a DevBox sent to the hub (its HTTPS_PROXY): 407 without the
 * DevBox's credentials, 403 when the host is not on its workflow's `devbox.network.allow` (or
 * the port is not 443, or the name resolves inside), else a tunnel to the host. The proxy never
 * sees inside the TLS it carries.
 */
export async function serveConnect(
  req: IncomingMessage,
  client: Duplex,
  head: Buffer,
  deps: EgressDeps,
): Promise<void> {
  client.on("error", () => client.destroy());
  const grant = grantOf(req, deps);
  if (grant === undefined) {
    answer(
      client,
      "407 Proxy Authentication Required",
      "clustercode egress: this proxy serves DevBoxes only (HTTPS_PROXY with the DevBox's id and token)",
      ['proxy-authenticate: Basic realm="clustercode"'],
    );
    return;
  }
  const target = parseAuthority(req.url);
  const ports = deps.options.ports ?? [443];
  if (target === undefined || !grant.allowed.has(target.host) || !ports.includes(target.port)) {
    const host = target?.host ?? String(req.url);
    answer(
      client,
      "403 Forbidden",
      `clustercode egress: ${host}${target === undefined || ports.includes(target.port) ? "" : ` on port ${target.port}`} is not allowed: add the host to devbox.network.allow in the workflow (HTTPS on port ${ports.join(", ")} only)`,
    );
    return;
  }
  let address: EgressTarget;
  try {
    address = await (deps.options.resolve ?? resolvePublic)(target.host, target.port);
  } catch (error) {
    const why =
      error instanceof InternalAddressError ? error.message : `${target.host} did not resolve`;
    answer(
      client,
      error instanceof InternalAddressError ? "403 Forbidden" : "502 Bad Gateway",
      `clustercode egress: ${why}`,
    );
    return;
  }
  openTunnel(client, head, target.host, address);
}

/** Headers a proxied request does not carry on: hop-by-hop ones and the DevBox's credentials. */
const HOP_BY_HOP = new Set([
  "proxy-authorization",
  "proxy-connection",
  "connection",
  "keep-alive",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

function refuse(res: ServerResponse, status: number, message: string, headers = {}): void {
  res.writeHead(status, { "content-type": "text/plain; charset=utf-8", ...headers });
  res.end(`${message}\n`);
}

/** Sends an allowed GET or HEAD on to `address` without hop-by-hop headers; pipes back the answer. */
function forwardRequest(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  address: EgressTarget,
): void {
  const headers = Object.fromEntries(
    Object.entries(req.headers).filter(([name]) => !HOP_BY_HOP.has(name)),
  );
  const upstream = httpRequest(
    {
      host: address.host,
      port: address.port,
      method: req.method,
      path: `${url.pathname}${url.search}`,
      headers: { ...headers, host: url.host },
    },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  upstream.on("error", () => {
    if (!res.headersSent)
      refuse(res, 502, `clustercode egress: ${url.hostname.toLowerCase()} did not answer`);
    else res.destroy();
  });
  upstream.end();
}

/**
 * Serves a plain-HTTP proxy request (`GET http://host/path`, as apt sends): the same checks as
 * {@link serveConnect} (port 80 instead of 443), GET and HEAD only, and the DevBox's
 * credentials are not passed on.
 */
export async function serveForward(
  req: IncomingMessage,
  res: ServerResponse,
  deps: EgressDeps,
): Promise<void> {
  const grant = grantOf(req, deps);
  if (grant === undefined) {
    refuse(res, 407, "clustercode egress: this proxy serves DevBoxes only", {
      "proxy-authenticate": 'Basic realm="clustercode"',
    });
    return;
  }
  let url: URL;
  try {
    url = new URL(req.url ?? "");
  } catch {
    refuse(res, 400, "clustercode egress: not an absolute http:// URL");
    return;
  }
  const port = url.port === "" ? 80 : Number(url.port);
  const host = url.hostname.toLowerCase();
  if (req.method !== "GET" && req.method !== "HEAD") {
    refuse(res, 405, "clustercode egress: plain HTTP is proxied for GET and HEAD only");
    return;
  }
  if (url.protocol !== "http:" || !grant.allowed.has(host) || port !== 80) {
    refuse(
      res,
      403,
      `clustercode egress: ${host} is not allowed: add the host to devbox.network.allow in the workflow (plain HTTP on port 80 only)`,
    );
    return;
  }
  let address: EgressTarget;
  try {
    address = await (deps.options.resolve ?? resolvePublic)(host, port);
  } catch (error) {
    if (error instanceof InternalAddressError)
      refuse(res, 403, `clustercode egress: ${error.message}`);
    else refuse(res, 502, `clustercode egress: ${host} did not resolve`);
    return;
  }
  forwardRequest(req, res, url, address);
}
