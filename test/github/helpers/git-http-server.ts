import { spawn } from "node:child_process";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One request git made, with the credentials it sent. */
export interface GitRequest {
  method: string;
  path: string;
  /** `user:password` of the Basic credentials, when any. */
  credentials?: string;
}

/**
 * Git's smart HTTP protocol over plain HTTP on 127.0.0.1, as `git http-backend` serves it: the
 * stand-in for a GitHub Enterprise Server's git side. `/<owner>/<name>.git` is the bare
 * repository `repositories[owner/name]`. Like GitHub, it asks for Basic credentials (401)
 * and takes only `x-access-token:<token>`.
 */
export class GitHttpServer {
  readonly requests: GitRequest[] = [];
  readonly repositories = new Map<string, string>();
  readonly #server = createServer((request, response) => this.#serve(request, response));

  /**
   * @param token The installation token git must send.
   * @param api Serves `/api/v3/…` and `/api/graphql` instead (a GitHub Enterprise Server's API
   *   on the same host), when given: the app then reaches a whole loopback GitHub here.
   */
  constructor(
    private readonly token: string,
    readonly api?: (request: IncomingMessage, response: ServerResponse) => void,
  ) {}

  /** Listens on a free loopback port; returns `127.0.0.1:<port>`. */
  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, "127.0.0.1", resolve));
    return `127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    this.#server.closeAllConnections();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }

  #serve(request: IncomingMessage, response: ServerResponse): void {
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    // A GitHub Enterprise Server answers GraphQL at /api/graphql, beside /api/v3.
    const isApi = url.pathname.startsWith("/api/v3/") || url.pathname === "/api/graphql";
    if (this.api !== undefined && isApi) {
      this.api(request, response);
      return;
    }
    const header = request.headers.authorization ?? "";
    const basic = /^Basic (.+)$/.exec(header)?.[1];
    const credentials = basic === undefined ? undefined : Buffer.from(basic, "base64").toString();
    this.requests.push({
      method: request.method ?? "",
      path: url.pathname,
      ...(credentials === undefined ? {} : { credentials }),
    });
    if (credentials === undefined) {
      response.writeHead(401, { "WWW-Authenticate": 'Basic realm="GitHub"' }).end();
      return;
    }
    if (credentials !== `x-access-token:${this.token}`) {
      response.writeHead(403).end("bad credentials");
      return;
    }
    const match = /^\/([^/]+\/[^/]+)\.git(\/.*)$/.exec(url.pathname);
    const repository = match === null ? undefined : this.repositories.get(match[1] ?? "");
    if (match === null || repository === undefined) {
      response.writeHead(404).end("no such repository");
      return;
    }
    this.#backend(request, response, repository, match[2] ?? "/", url.search.slice(1));
  }

  /** Runs `git http-backend` as a CGI program for one request. */
  #backend(
    request: IncomingMessage,
    response: ServerResponse,
    repository: string,
    pathInfo: string,
    query: string,
  ): void {
    const cgi = spawn("git", ["http-backend"], {
      env: {
        PATH: process.env.PATH,
        GIT_PROJECT_ROOT: repository,
        GIT_HTTP_EXPORT_ALL: "1",
        PATH_INFO: pathInfo,
        QUERY_STRING: query,
        REQUEST_METHOD: request.method ?? "GET",
        CONTENT_TYPE: request.headers["content-type"] ?? "",
        HTTP_CONTENT_ENCODING: request.headers["content-encoding"] ?? "",
        ...(request.headers["content-length"] === undefined
          ? {}
          : { CONTENT_LENGTH: request.headers["content-length"] }),
        GIT_PROTOCOL: String(request.headers["git-protocol"] ?? ""),
        // An authenticated user may push (receive-pack), as on GitHub.
        REMOTE_USER: "x-access-token",
        REMOTE_ADDR: "127.0.0.1",
      },
    });
    request.pipe(cgi.stdin);
    let head = Buffer.alloc(0);
    let started = false;
    cgi.stdout.on("data", (chunk: Buffer) => {
      if (started) {
        response.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end === -1) return;
      started = true;
      let status = 200;
      for (const line of head.subarray(0, end).toString().split("\r\n")) {
        const [name, ...rest] = line.split(":");
        const value = rest.join(":").trim();
        if (name?.toLowerCase() === "status") status = Number.parseInt(value, 10);
        else if (name !== undefined && name !== "") response.setHeader(name, value);
      }
      response.writeHead(status);
      response.write(head.subarray(end + 4));
    });
    cgi.on("close", () => response.end());
  }
}
