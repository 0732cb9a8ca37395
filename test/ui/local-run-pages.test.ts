import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunEvent } from "../../src/engine/model.js";
import type { RunDocument } from "../../src/runtime/runtime.js";
import { openStore, type OpenedStore } from "../../src/store/embedded.js";
import { RunRepository } from "../../src/store/run-repository.js";
import { LocalRunPages } from "../../src/ui/local-run-pages.js";
import { createRunPagesHandler } from "../../src/ui/run-pages-server.js";
import { atApproval, replayGolden } from "./replayed-run.js";
import { decodeSettings } from "../../src/settings/index.js";

describe("the run pages' JSON API (clustercode ui)", () => {
  let opened: OpenedStore;
  let server: Server;
  let base: string;
  let assets: string;
  const delivered: RunEvent[] = [];
  beforeAll(async () => {
    opened = await openStore({ settings: decodeSettings({}).store });
    const { stored, evidence } = replayGolden("lifecycle-rework-and-reject", { until: atApproval });
    await opened.store.createRun(stored);
    await opened.store.writeAfterEffects(evidence, []);
    assets = mkdtempSync(join(tmpdir(), "cc-assets-"));
    mkdirSync(join(assets, "client"));
    writeFileSync(join(assets, "client", "run-page.js"), "export {};\n");
    server = createServer();
    const pages = new LocalRunPages({
      host: {
        runs: new RunRepository(opened.store),
        resume: async (runId) =>
          ((await opened.store.getRun(runId))?.snapshot as RunDocument).state,
        deliver: (_runId, event) => {
          delivered.push(event);
          return Promise.resolve({
            applied: false,
            state: undefined,
            refused: { code: "not-applicable" as const, message: "the test keeps the run" },
          });
        },
      },
      actor: "carol",
      port: () => (server.address() as AddressInfo).port,
      now: () => 5_000_000,
    });
    const handler = createRunPagesHandler(pages, opened.store, { assetDir: assets });
    server.on("request", (req, res) => {
      void handler(req, res).then((handled) => {
        if (!handled) res.writeHead(404).end();
      });
    });
    await new Promise<void>((listening) => server.listen(0, "127.0.0.1", () => listening()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((closed) => server.close(() => closed()));
    await opened.close();
    rmSync(assets, { recursive: true, force: true });
  });

  it("lists the runs, and gives a run's view: status, graph, visits, budgets, the approval", async () => {
    const index = (await (await fetch(`${base}/api/runs`)).json()) as {
      runs: unknown[];
      judges: unknown[];
    };
    expect(index.judges).toEqual([
      expect.objectContaining({ provider: "anthropic", model: "claude-opus-4-1", overturned: 0 }),
    ]);
    expect(index.runs).toEqual([
      expect.objectContaining({
        runId: "r1",
        status: "awaiting_input",
        activeNode: "deploy-approval",
        page: "/runs/r1",
      }),
    ]);
    const run = await fetch(`${base}/api/runs/r1`);
    expect(run.headers.get("content-type")).toBe("application/json; charset=utf-8");
    const view = (await run.json()) as Record<string, unknown>;
    expect(Object.keys(view)).toEqual(
      expect.arrayContaining([
        "runId",
        "status",
        "graph",
        "visits",
        "budgets",
        "approval",
        "links",
      ]),
    );
    expect(view.approval).toMatchObject({ node: "deploy-approval", visit: 14 });
  });

  it("serves pages for the run, its visits and the index, and 404 for anything else", async () => {
    const page = await fetch(`${base}/runs/r1/visits/6`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(await page.text()).toContain("Feedback handed to iteration 2");
    const indexPage = await fetch(`${base}/runs`);
    expect(indexPage.status).toBe(200);
    // The index shows the listed runs' judges: the lifecycle's review judge and its verdicts.
    expect(await indexPage.text()).toMatch(
      /<h2>Judges<\/h2>.*<td>anthropic<\/td><td><code>claude-opus-4-1<\/code><\/td><td>\d+<\/td>/,
    );
    const missing = await fetch(`${base}/api/runs/nope`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ message: "There is no run nope here." });
    for (const path of [
      "/runs/r1/visits/x",
      "/runs/r1/answer",
      "/runs/%2e%2e",
      "/ui-assets/client/..%2fx.js",
    ])
      expect((await fetch(`${base}${path}`)).status, path).toBe(404);
    expect(await (await fetch(`${base}/ui-assets/client/run-page.js`)).text()).toBe("export {};\n");
  });

  it("refuses requests naming another host (DNS rebinding)", async () => {
    const port = (server.address() as AddressInfo).port;
    // fetch sets Host from the URL; a rebound name reaches the server with its own Host header.
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest({
        host: "127.0.0.1",
        port,
        path: "/runs",
        headers: { host: "evil.example" },
      });
      req.on("response", (res) => resolve(res.statusCode ?? 0)).on("error", reject);
      req.end();
    });
    expect(status).toBe(403);
  });

  it("takes an answer only with the page's CSRF token, for the approval the page showed", async () => {
    const html = await (await fetch(`${base}/runs/r1`)).text();
    const csrf = /data-csrf="([0-9a-f]+)"/.exec(html)?.[1] ?? "";
    const post = (token: string, body: object) =>
      fetch(`${base}/api/runs/r1/answer`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-clustercode-csrf": token },
        body: JSON.stringify(body),
      });
    expect((await post("forged", { decision: "approved", visit: 14 })).status).toBe(403);
    const stale = await post(csrf, { decision: "approved", visit: 3 });
    expect(stale.status).toBe(409);
    expect(await stale.json()).toMatchObject({
      message: "That page showed an earlier approval of run r1; reload it.",
    });
    expect((await post(csrf, { decision: "maybe", visit: 14 })).status).toBe(400);
    const refused = await post(csrf, { decision: "approved", visit: 14, note: "ship it" });
    expect(await refused.json()).toEqual({
      ok: false,
      message: "Not applied: the test keeps the run.",
    });
    expect(delivered).toEqual([
      {
        type: "approval.answer",
        decision: "approved",
        actor: "carol",
        node: "deploy-approval",
        where: "run page",
        note: "ship it",
        at: 5_000_000,
      },
    ]);
  });
});
