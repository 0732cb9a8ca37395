import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { resolve } from "node:path";
import { createEditorHandler } from "../editor/editor-server.js";
import { LocalWorkflowFiles } from "../editor/local-workflow-files.js";
import { LocalHost } from "../runtime/local-host.js";
import { localWarmDemand } from "./local-warm.js";
import { RunRepository } from "../store/run-repository.js";
import { LocalRunPages } from "../ui/local-run-pages.js";
import { createRunPagesHandler } from "../ui/run-pages-server.js";
import { parseOptions, UsageError, type Command } from "./command.js";
import { findWorkflowRoot } from "../workflow/find-workflows.js";
import { resolveStateDir } from "./run-output.js";

/**
 * `clustercode ui [--state-dir D] [--port N] [--repo DIR]`: serves the run pages of the state
 * directory's runs, and the workflow editor (`/workflows`), on 127.0.0.1 until interrupted. It
 * shares the state directory with other commands and drives the runs answered from the pages.
 */
const ui: Command = async (args, io) => {
  const { values } = parseOptions(args, {
    "state-dir": { type: "string" },
    port: { type: "string" },
    repo: { type: "string" },
  });
  const port = Number(values.port ?? "0");
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new UsageError("--port must be a port number");
  const stateDir = resolveStateDir(values["state-dir"], io.settings.store);
  const repo = resolve(io.cwd, values.repo ?? ".");
  // The session's first DevBox of this repository (a run answered here) is then a warm one.
  const warmDemand = await localWarmDemand(repo);
  const host = await LocalHost.open({ command: "ui", stateDir, env: io.env, warmDemand });
  const server = createServer();
  const pages = new LocalRunPages({
    host: {
      runs: new RunRepository(host.store),
      resume: (runId) => host.resume(runId),
      deliver: (runId, event) => host.runtime.deliver(runId, event),
    },
    actor: io.env.USER ?? "local",
    stateDir,
    repo,
    port: () => (server.address() as AddressInfo).port,
  });
  const runPages = createRunPagesHandler(pages, host.store);
  const files = new LocalWorkflowFiles((await findWorkflowRoot(repo)) ?? repo);
  const editor = createEditorHandler(pages, files);
  server.on("request", (req, res) => {
    editor(req, res)
      .then(async (handled) => handled || (await runPages(req, res)))
      .then((handled) => {
        if (handled) return;
        res.writeHead(302, { location: "/runs" });
        res.end();
      })
      .catch((error: unknown) => {
        io.stderr.write(
          `clustercode ui: ${error instanceof Error ? error.message : String(error)}\n`,
        );
        if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
        res.end("internal error\n");
      });
  });
  await new Promise<void>((listening, failed) => {
    server.once("error", failed);
    server.listen(port, "127.0.0.1", () => listening());
  });
  io.stdout.write(
    `ClusterCode run pages: http://127.0.0.1:${(server.address() as AddressInfo).port}/runs\n`,
  );
  await new Promise<void>((stop) => {
    process.once("SIGINT", () => stop());
    process.once("SIGTERM", () => stop());
  });
  server.closeAllConnections();
  await new Promise<void>((closed) => server.close(() => closed()));
  await host.close();
  return 0;
};

export default ui;
