/* global Buffer, URL, process, console */
// A loopback GitHub for the benchmarks: an HTTP server on 127.0.0.1 that answers the REST
// calls the app makes for runs that park at an approval (as a GitHub Enterprise Server API at
// /api/v3), counts them, and enforces a per-installation pace of content-creating requests
// (POST of comments, issues, pull requests, check runs): one sooner than `createGapMs` after
// the installation's previous one is refused with a 403 secondary rate limit and `retry-after`,
// as GitHub does. Installation n serves repositories `bench/r<n>`; tokens name their
// installation.
import { createServer } from "node:http";
import { serveGit } from "./git-backend.js";

/**
 * Starts the loopback GitHub; `workflow` is `.clustercode/workflow.yml` of every repository, and
 * `repositories` (`owner/name` → a bare repository's path) are served over git's smart HTTP.
 */
export async function startLoopbackGitHub({ workflow, createGapMs = 0, repositories = {} }) {
  const counts = { requests: 0, writes: 0, creates: 0, refused: 0 };
  /** When each issue's status comment was created (issue number → ms since the epoch). */
  const statusCreated = new Map();
  const lastCreate = new Map();
  let nextId = 1;
  let lastRequestAt = Date.now();
  const content = Buffer.from(workflow).toString("base64");

  const answer = (method, path, installation, body) => {
    const repo = /^\/repos\/bench\/r(\d+)(\/.*)?$/.exec(path);
    if (method === "POST" && /^\/app\/installations\/\d+\/access_tokens$/.test(path)) {
      const id = path.split("/")[3];
      return [201, { token: `inst-${id}`, expires_at: "2999-01-01T00:00:00Z", permissions: {} }];
    }
    if (method === "GET" && path === "/app") return [200, { id: 1, slug: "bench-app" }];
    if (method === "GET" && path === "/app/installations") return [200, []];
    if (method === "GET" && path.startsWith("/app/hook/deliveries")) return [200, []];
    if (repo === null) return [404, { message: "Not Found" }];
    const [, n, rest = ""] = repo;
    if (method === "GET" && rest === "/installation") return [200, { id: Number(n) }];
    if (method === "GET" && rest === "/contents/.clustercode/workflow.yml")
      return [
        200,
        { type: "file", path: ".clustercode/workflow.yml", sha: "a".repeat(40), content },
      ];
    if (method === "GET" && /^\/collaborators\/[^/]+\/permission$/.test(rest))
      return [200, { permission: "write", role_name: "write" }];
    if (method === "GET" && /^\/issues\/\d+\/comments$/.test(rest)) return [200, []];
    if (method === "GET" && /\/check-runs$/.test(rest))
      return [200, { total_count: 0, check_runs: [] }];
    if (method === "GET" && rest === "/pulls") return [200, []];
    if (method === "DELETE" && /^\/issues\/\d+\/labels\//.test(rest)) return [200, []];
    const creates =
      method === "POST" && /^\/(issues(\/\d+\/comments)?|pulls|check-runs)$/.test(rest);
    if (creates) {
      const now = Date.now();
      const last = lastCreate.get(installation) ?? -Infinity;
      if (now - last < createGapMs) {
        counts.refused++;
        return [
          403,
          { message: "You have exceeded a secondary rate limit." },
          { "retry-after": String(Math.ceil((createGapMs - (now - last)) / 1000)) },
        ];
      }
      lastCreate.set(installation, now);
      counts.creates++;
      const issue = /^\/issues\/(\d+)\/comments$/.exec(rest)?.[1];
      if (issue !== undefined && body.includes("clustercode:run:"))
        statusCreated.set(Number(issue), now);
      const id = nextId++;
      return [201, { id, number: id, html_url: `http://github.test/${id}`, body: "" }];
    }
    if (method === "PATCH" || method === "POST") return [200, { id: nextId++, html_url: "" }];
    return [404, { message: "Not Found" }];
  };

  const server = createServer((req, res) => {
    // `repositories` (owner/name → bare repository) are served over git's smart HTTP.
    if (serveGit(req, res, repositories)) return;
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      lastRequestAt = Date.now();
      counts.requests++;
      const method = req.method ?? "GET";
      if (method !== "GET") counts.writes++;
      const path = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname).replace(
        /^\/api\/v3/,
        "",
      );
      const token = /inst-(\d+)/.exec(req.headers.authorization ?? "")?.[1] ?? "app";
      const [status, data, headers = {}] = answer(method, path, token, body);
      if (process.env.BENCH_TRACE) console.error(method, path, status);
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(JSON.stringify(data));
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  return {
    /** `host:port`, for GHE_HOST (with GHE_PROTOCOL=http). */
    host: `127.0.0.1:${port}`,
    counts,
    statusCreated,
    /** Milliseconds since the last request (or since `touch`). */
    quietFor: () => Date.now() - lastRequestAt,
    /** Counts from now as a request for `quietFor`. */
    touch: () => (lastRequestAt = Date.now()),
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
