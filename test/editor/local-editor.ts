import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createEditorHandler } from "../../src/editor/editor-server.js";
import { LocalWorkflowFiles } from "../../src/editor/local-workflow-files.js";
import { LocalRunPages } from "../../src/ui/local-run-pages.js";

/** An editor served as `clustercode ui` serves it, over a temporary repository's workflows. */
export interface LocalEditor {
  base: string;
  root: string;
  csrf: string;
  close(): Promise<void>;
}

/** Starts the editor on 127.0.0.1 over a temporary directory holding `files`. */
export async function startLocalEditor(files: Record<string, string>): Promise<LocalEditor> {
  const root = mkdtempSync(join(tmpdir(), "cc-editor-"));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, ".."), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  const server = createServer();
  const pages = new LocalRunPages({
    host: {
      runs: { listActive: () => Promise.resolve([]), list: () => Promise.resolve([]) },
      resume: () => Promise.resolve(undefined),
      deliver: () => Promise.reject(new Error("the editor answers nothing")),
    },
    actor: "carol",
    port: () => (server.address() as AddressInfo).port,
  });
  const handler = createEditorHandler(pages, new LocalWorkflowFiles(root));
  server.on("request", (req, res) => {
    void handler(req, res).then((handled) => {
      if (!handled) res.writeHead(404).end();
    });
  });
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", () => listening()));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const page = await (await fetch(`${base}/workflows/.clustercode/workflow.yml/edit`)).text();
  const csrf = /data-csrf="([^"]+)"/.exec(page)?.[1] ?? "";
  return {
    base,
    root,
    csrf,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((closed) => server.close(() => closed()));
      rmSync(root, { recursive: true, force: true });
    },
  };
}
