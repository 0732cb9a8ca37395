/* global Buffer, URL, process */
// Git's smart HTTP for the benchmarks' loopback GitHub: `git http-backend` as a CGI program,
// serving `/<owner>/<name>.git/…` from a bare repository, as a GitHub Enterprise Server's git
// side would (any Basic credentials are taken; pushes are allowed).
import { spawn } from "node:child_process";

const PATH = /^\/([^/]+\/[^/]+)\.git(\/.*)$/;

/**
 * Serves `req` from `repositories[owner/name]` (a bare repository's path) and returns true, or
 * returns false when `req` is not a git request for one of them.
 */
export function serveGit(req, res, repositories) {
  const url = new URL(req.url ?? "/", "http://127.0.0.1");
  const match = PATH.exec(url.pathname);
  const repository = match === null ? undefined : repositories[match[1]];
  if (match === null || repository === undefined) return false;
  if (!/^Basic /.test(req.headers.authorization ?? "")) {
    res.writeHead(401, { "WWW-Authenticate": 'Basic realm="GitHub"' }).end();
    return true;
  }
  const cgi = spawn("git", ["http-backend"], {
    env: {
      PATH: process.env.PATH,
      GIT_PROJECT_ROOT: repository,
      GIT_HTTP_EXPORT_ALL: "1",
      PATH_INFO: match[2],
      QUERY_STRING: url.search.slice(1),
      REQUEST_METHOD: req.method ?? "GET",
      CONTENT_TYPE: req.headers["content-type"] ?? "",
      HTTP_CONTENT_ENCODING: req.headers["content-encoding"] ?? "",
      ...(req.headers["content-length"] === undefined
        ? {}
        : { CONTENT_LENGTH: req.headers["content-length"] }),
      GIT_PROTOCOL: String(req.headers["git-protocol"] ?? ""),
      REMOTE_USER: "x-access-token",
      REMOTE_ADDR: "127.0.0.1",
    },
  });
  req.pipe(cgi.stdin);
  let head = Buffer.alloc(0);
  let started = false;
  cgi.stdout.on("data", (chunk) => {
    if (started) return void res.write(chunk);
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf("\r\n\r\n");
    if (end === -1) return;
    started = true;
    let status = 200;
    for (const line of head.subarray(0, end).toString().split("\r\n")) {
      const [name, ...rest] = line.split(":");
      const value = rest.join(":").trim();
      if (name?.toLowerCase() === "status") status = Number.parseInt(value, 10);
      else if (name) res.setHeader(name, value);
    }
    res.writeHead(status);
    res.write(head.subarray(end + 4));
  });
  cgi.on("close", () => res.end());
  return true;
}
