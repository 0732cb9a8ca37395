import { timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { readVerdicts } from "../scorecard/read-verdicts.js";
import { scorecard } from "../scorecard/scorecard.js";
import { RunRepository, type LoadedRun, type RunReads } from "../store/run-repository.js";
import { defaultAssetDir, serveAsset } from "./assets.js";
import { buildRunView, summarizeRun } from "./build-run-view.js";
import { PAGE_HEADERS, renderMessagePage, renderShell } from "./page-shell.js";
import type { Access, RunPagesHost, Viewer } from "./run-pages-host.js";
import { parseTarget, pathsOf, type Target } from "./run-pages-paths.js";
import { renderIndexPage } from "./view/render-index.js";
import { renderRunPage } from "./view/render-run.js";
import { renderVisitPage } from "./view/render-visit.js";
import type { RunListView, RunView } from "./view/run-view.js";

/** An HTTP handler in the shape Probot's `addHandler` takes: true when it answered. */
export type RunPagesHandler = (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;

const MAX_BODY = 4096;

/**
 * The run pages and their JSON API over a read port of the store, for either host:
 * `GET /runs/…` pages (server-rendered, then kept live by the script), `GET /api/runs/…` the
 * same data as JSON, `POST /api/runs/…/<runId>/answer` Approve / Reject (signed in, CSRF
 * token, the host's approval rules), and `/ui-assets/…` the script and stylesheet.
 */
export function createRunPagesHandler(
  host: RunPagesHost,
  store: RunReads,
  options: { assetDir?: string } = {},
): RunPagesHandler {
  const runs = new RunRepository(store);
  const assetDir = options.assetDir ?? defaultAssetDir();
  return async (req, res) => {
    const url = new URL(req.url ?? "/", "http://run-pages.invalid");
    const path = url.pathname;
    if (req.method === "GET" && path.startsWith("/ui-assets/"))
      return serveAsset(path, res, assetDir);
    if ((await host.routes?.(req, res)) === true) return true;
    const api = path === "/api/runs" || path.startsWith("/api/runs/");
    const page = path === "/runs" || path.startsWith("/runs/");
    if (!api && !page) return false;
    const target = parseTarget(
      path.slice(api ? "/api/runs".length : "/runs".length),
      host.repoSegments,
    );
    const wantsPost = target?.kind === "answer";
    if (
      target === undefined ||
      (wantsPost ? req.method !== "POST" || !api : req.method !== "GET")
    ) {
      sendError(res, api, 404, "Not found", "There is no such page.");
      return true;
    }
    const access = await host.access(req, target.repo, `${path}${url.search}`);
    if (!access.ok) {
      refuse(res, api, access);
      return true;
    }
    if (target.kind === "index") await serveIndex(res, api, { host, runs, target }, access.viewer);
    else await serveRun(req, res, api, { host, runs, target, viewer: access.viewer });
    return true;
  };
}

/** A repository's (or the local) index of runs, as a page or JSON. */
async function serveIndex(
  res: ServerResponse,
  api: boolean,
  context: { host: RunPagesHost; runs: RunRepository; target: Target },
  viewer: Viewer,
): Promise<void> {
  const { host, target } = context;
  const paths = pathsOf(target);
  const runs = await host.listRuns(target.repo);
  const list: RunListView = {
    title: target.repo === undefined ? "ClusterCode runs" : `ClusterCode runs of ${target.repo}`,
    runs: runs.map((run) =>
      summarizeRun(run, `${paths.index}/${encodeURIComponent(run.stored.runId)}`),
    ),
    judges: scorecard(await readVerdicts(runs, context.runs)),
  };
  if (api) sendJson(res, 200, list);
  else
    send(
      res,
      200,
      renderShell(
        renderIndexPage(list),
        shellOf(target, viewer, false, list.title, host.signOutPath),
      ),
    );
}

/** A run's page, a visit's page, the run as JSON, or an answer to its approval. */
async function serveRun(
  req: IncomingMessage,
  res: ServerResponse,
  api: boolean,
  context: {
    host: RunPagesHost;
    runs: RunRepository;
    target: Exclude<Target, { kind: "index" }>;
    viewer: Viewer;
  },
): Promise<void> {
  const { host, runs, target, viewer } = context;
  const paths = pathsOf(target);
  const run = await runs.get(target.runId);
  if (run === undefined || (target.repo !== undefined && run.stored.repo !== target.repo)) {
    sendError(res, api, 404, "No such run", `There is no run ${target.runId} here.`);
    return;
  }
  if (target.kind === "answer") {
    await answer(req, res, host, run, viewer, paths.run);
    return;
  }
  const view = buildRunView(run, await runs.evidence(run.stored.runId), host.links(run));
  if (api) {
    sendJson(res, 200, view);
    return;
  }
  const content =
    target.kind === "visit"
      ? renderVisitPage(view, target.visit, paths)
      : renderRunPage(view, paths);
  send(
    res,
    200,
    renderShell(content, shellOf(target, viewer, view.final, titleOf(view), host.signOutPath)),
  );
}

async function answer(
  req: IncomingMessage,
  res: ServerResponse,
  host: RunPagesHost,
  run: LoadedRun,
  viewer: Viewer,
  pagePath: string,
): Promise<void> {
  if (!fromThePage(req, viewer)) {
    sendJson(res, 403, {
      message: "This request did not come from the run page (missing or wrong CSRF token).",
    });
    return;
  }
  const body = await readBody(req);
  const parsed = parseAnswer(body);
  if (parsed === undefined) {
    sendJson(res, 400, {
      message: 'Send {"decision": "approved" | "rejected", "visit": N, "note"?: text}.',
    });
    return;
  }
  const result = await host.answer({ viewer, run, pagePath, ...parsed });
  sendJson(res, result.status, { ok: result.ok, message: result.message });
}

function parseAnswer(body: string | undefined) {
  try {
    const value = JSON.parse(body ?? "") as Record<string, unknown>;
    const { decision, visit, note } = value;
    if (decision !== "approved" && decision !== "rejected") return undefined;
    if (typeof visit !== "number" || !Number.isInteger(visit)) return undefined;
    if (note !== undefined && typeof note !== "string") return undefined;
    return {
      decision,
      visit,
      ...(note === undefined || note === "" ? {} : { note: note.slice(0, 500) }),
    } as const;
  } catch {
    return undefined;
  }
}

async function readBody(req: IncomingMessage): Promise<string | undefined> {
  let body = "";
  for await (const chunk of req as AsyncIterable<Buffer>) {
    body += chunk.toString("utf8");
    if (body.length > MAX_BODY) return undefined;
  }
  return body;
}

function shellOf(
  target: Target,
  viewer: Viewer,
  final: boolean,
  title: string,
  signOutPath: string | undefined,
) {
  const paths = pathsOf(target);
  const api = `/api${target.kind === "index" ? paths.index : paths.run}`;
  return {
    title,
    page:
      target.kind === "visit"
        ? ("visit" as const)
        : target.kind === "index"
          ? ("index" as const)
          : ("run" as const),
    api,
    indexPath: paths.index,
    csrf: viewer.csrf,
    final,
    viewer: viewer.login,
    ...(signOutPath === undefined ? {} : { signOutPath }),
    ...(target.kind === "index" ? {} : { runPath: paths.run }),
    ...(target.kind === "visit" ? { visit: target.visit } : {}),
  };
}

function titleOf(view: RunView): string {
  return `${view.workflow} ${view.runId}: ${view.status}${view.activeNode === undefined ? "" : ` at ${view.activeNode}`}`;
}

/** Answers a request the host refused: JSON for the API, sign-in or a message for pages. */
export function refuse(
  res: ServerResponse,
  api: boolean,
  access: Extract<Access, { ok: false }>,
): void {
  if (api) {
    sendJson(res, access.status, {
      message: access.message,
      ...(access.signIn === undefined ? {} : { signIn: access.signIn }),
    });
  } else if (access.status === 401 && access.signIn !== undefined) {
    res.writeHead(302, { location: access.signIn, "cache-control": "no-store" });
    res.end();
  } else {
    res.writeHead(access.status, PAGE_HEADERS);
    res.end(
      renderMessagePage(access.status === 401 ? "Sign in needed" : "No access", access.message),
    );
  }
}

function sendError(
  res: ServerResponse,
  api: boolean,
  status: number,
  title: string,
  message: string,
): void {
  if (api) sendJson(res, status, { message });
  else {
    res.writeHead(status, PAGE_HEADERS);
    res.end(renderMessagePage(title, message));
  }
}

function send(res: ServerResponse, status: number, html: string): void {
  res.writeHead(status, PAGE_HEADERS);
  res.end(html);
}

/** Sends `value` as an uncached JSON answer. */
export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
  });
  res.end(JSON.stringify(value));
}

/**
 * Whether a state-changing request came from a page of this server: a cross-site request can
 * neither read the CSRF token nor send this header and JSON without a preflight the server never
 * grants.
 */
export function fromThePage(req: IncomingMessage, viewer: Viewer): boolean {
  const token = req.headers["x-clustercode-csrf"];
  const site = req.headers["sec-fetch-site"];
  const json = (req.headers["content-type"] ?? "").startsWith("application/json");
  return (
    typeof token === "string" &&
    sameText(token, viewer.csrf) &&
    json &&
    (site === undefined || site === "same-origin")
  );
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
