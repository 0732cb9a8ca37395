import { readFile } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { RunPagesHost, Viewer } from "../ui/run-pages-host.js";
import { fromThePage, refuse, sendJson } from "../ui/run-pages-server.js";
import { PAGE_HEADERS } from "../ui/page-shell.js";
import { MAX_FILE_BYTES, parseWorkflow } from "../workflow/parse.js";
import { editorPaths, parseEditorTarget, type EditorTarget } from "./editor-paths.js";
import { renderEditorPage, renderWorkflowList } from "./editor-page.js";
import { EDITOR_CSS } from "./editor-styles.js";
import { parsePositions } from "./layout-file.js";
import type { WorkflowFiles } from "./workflow-files.js";

/** A request body: the YAML (at most the validator's limit) and positions, JSON-encoded. */
const MAX_BODY = MAX_FILE_BYTES * 2 + 64 * 1024;

/** An HTTP handler in the run pages' shape: true when it answered. */
export type EditorHandler = (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;

/** Where the bundled editor script is: `dist/editor/` beside the compiled module. */
export function defaultBundleDir(): string {
  const here = fileURLToPath(new URL(".", import.meta.url));
  return import.meta.url.endsWith(".ts") ? join(here, "../../dist/editor") : here;
}

/**
 * The workflow editor beside the run pages, with the same host (who may see what, CSRF tokens):
 * `GET /workflows` lists the workflows, `GET /workflows/<path>/edit` is the editor,
 * `GET|PUT /api/workflows/<path>` opens and saves a file, and `POST /api/workflows/validate`
 * answers `{findings}` as `clustercode validate --format json` does. The app's paths carry
 * `owner/repo` after `/workflows`.
 */
export function createEditorHandler(
  host: RunPagesHost,
  files: WorkflowFiles,
  options: { bundleDir?: string } = {},
): EditorHandler {
  const bundleDir = options.bundleDir ?? defaultBundleDir();
  return async (req, res) => {
    const url = new URL(req.url ?? "/", "http://editor.invalid");
    const path = url.pathname;
    if (req.method === "GET" && path === "/ui-assets/editor.css") {
      sendAsset(res, "text/css; charset=utf-8", EDITOR_CSS);
      return true;
    }
    if (req.method === "GET" && path === "/ui-assets/editor/editor.js") {
      const script = await readFile(join(bundleDir, "editor.js"), "utf8").catch(() => undefined);
      if (script === undefined) sendJson(res, 404, { message: "the editor is not built" });
      else sendAsset(res, "text/javascript; charset=utf-8", script);
      return true;
    }
    const api = path === "/api/workflows" || path.startsWith("/api/workflows/");
    if (!api && path !== "/workflows" && !path.startsWith("/workflows/")) return false;
    const rest = path.slice(api ? "/api/workflows".length : "/workflows".length);
    const target = parseEditorTarget(rest, api, host.repoSegments);
    if (target === undefined || !allowed(req.method, target)) {
      sendJson(res, 404, {
        message:
          "There is no such workflow page: workflows are .clustercode/workflow.yml or .clustercode/workflows/NAME.yml.",
      });
      return true;
    }
    if (target.kind === "validate") {
      await validate(req, res);
      return true;
    }
    const access = await host.access(req, target.repo, `${path}${url.search}`);
    if (!access.ok) refuse(res, api, access);
    else await serve(req, res, { files, target, viewer: access.viewer, api });
    return true;
  };
}

function allowed(method: string | undefined, target: EditorTarget): boolean {
  if (target.kind === "validate") return method === "POST";
  if (target.kind === "file") return method === "GET" || method === "PUT";
  return method === "GET";
}

async function serve(
  req: IncomingMessage,
  res: ServerResponse,
  context: {
    files: WorkflowFiles;
    target: Exclude<EditorTarget, { kind: "validate" }>;
    viewer: Viewer;
    api: boolean;
  },
): Promise<void> {
  const { files, target, viewer } = context;
  const paths = editorPaths(target.repo);
  if (target.kind === "list") {
    const list = await files.list(target.repo);
    if (context.api) {
      sendJson(res, 200, {
        workflows: list.map((path) => ({ path, edit: `${paths.list}/${path}/edit` })),
      });
      return;
    }
    const title = `Workflows${target.repo === undefined ? "" : ` of ${target.repo}`}`;
    sendPage(res, renderWorkflowList(title, list, paths.list));
  } else if (target.kind === "edit") {
    sendPage(
      res,
      renderEditorPage({
        path: target.path,
        fileApi: `${paths.api}/${target.path}`,
        validateApi: "/api/workflows/validate",
        listPath: paths.list,
        csrf: viewer.csrf,
        saves: files.saves,
        viewer: viewer.login,
      }),
    );
  } else if (req.method === "GET") {
    sendJson(res, 200, await files.open(target.repo, target.path));
  } else {
    await save(req, res, context as typeof context & { target: { kind: "file"; path: string } });
  }
}

async function save(
  req: IncomingMessage,
  res: ServerResponse,
  context: { files: WorkflowFiles; target: { repo?: string; path: string }; viewer: Viewer },
): Promise<void> {
  const { files, target, viewer } = context;
  if (!fromThePage(req, viewer)) {
    sendJson(res, 403, {
      message: "This request did not come from the editor (missing or wrong CSRF token).",
    });
    return;
  }
  const body = await readJson(req);
  const yaml = body?.yaml;
  const version = body?.version;
  const positions = parsePositions(body?.positions);
  if (typeof yaml !== "string" || typeof version !== "string" || positions === undefined) {
    sendJson(res, 400, {
      message: 'Send {"yaml": "…", "version": "<the version you opened>", "positions"?: {…}}.',
    });
    return;
  }
  const parsed = parseWorkflow(yaml);
  if (parsed.findings.some((finding) => finding.rule === "yaml")) {
    sendJson(res, 400, {
      message: "The YAML does not parse: nothing was saved.",
      findings: parsed.findings,
    });
    return;
  }
  const result = await files.save({
    repo: target.repo,
    path: target.path,
    yaml,
    version,
    positions,
    viewer,
  });
  if (!result.ok) sendJson(res, result.status, { message: result.message });
  else sendJson(res, 200, { ...result, findings: parsed.findings });
}

/** `POST /api/workflows/validate`: the findings of `{yaml}`, as the CLI prints them. */
async function validate(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = await readJson(req);
  if (typeof body?.yaml !== "string") {
    sendJson(res, 400, { message: 'Send {"yaml": "…"} (at most 256 KiB of YAML).' });
    return;
  }
  sendJson(res, 200, { findings: parseWorkflow(body.yaml).findings });
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown> | undefined> {
  let body = "";
  for await (const chunk of req as AsyncIterable<Buffer>) {
    body += chunk.toString("utf8");
    if (body.length > MAX_BODY) return undefined;
  }
  try {
    const value: unknown = JSON.parse(body);
    return typeof value === "object" && value !== null
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

function sendPage(res: ServerResponse, html: string): void {
  res.writeHead(200, PAGE_HEADERS);
  res.end(html);
}

function sendAsset(res: ServerResponse, type: string, body: string): void {
  res.writeHead(200, {
    "content-type": type,
    "x-content-type-options": "nosniff",
    "cache-control": "no-cache",
  });
  res.end(body);
}
