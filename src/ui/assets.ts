import { readFile } from "node:fs/promises";
import type { ServerResponse } from "node:http";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { RUN_PAGES_CSS } from "./styles.js";

/**
 * Where the browser's modules are: the compiled `dist/ui/` beside this module. Run from its
 * TypeScript source (the tests), this module serves the build's output, so build first.
 */
export function defaultAssetDir(): string {
  const here = fileURLToPath(new URL(".", import.meta.url));
  return import.meta.url.endsWith(".ts") ? join(here, "../../dist/ui") : here;
}

/** The folders of compiled modules the browser may load: the script and the pure renderers. */
const FOLDERS = new Set(["client", "view"]);

/**
 * Serves `/ui-assets/run-pages.css` and `/ui-assets/{client,view}/<name>.js`; nothing else of
 * the file system is reachable (names are checked against a strict pattern). True when handled.
 */
export async function serveAsset(path: string, res: ServerResponse, dir: string): Promise<boolean> {
  if (path === "/ui-assets/run-pages.css") {
    send(res, 200, "text/css; charset=utf-8", RUN_PAGES_CSS);
    return true;
  }
  const match = /^\/ui-assets\/([a-z]+)\/([a-z0-9-]+\.js)$/.exec(path);
  if (match === null || !FOLDERS.has(match[1] ?? "")) return false;
  try {
    const text = await readFile(join(dir, match[1] ?? "", match[2] ?? ""), "utf8");
    send(res, 200, "text/javascript; charset=utf-8", text);
  } catch {
    send(res, 404, "text/plain; charset=utf-8", "not found\n");
  }
  return true;
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, {
    "content-type": type,
    "x-content-type-options": "nosniff",
    "cache-control": "no-cache",
  });
  res.end(body);
}
