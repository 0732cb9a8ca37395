import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultAssetDir } from "../../src/ui/assets.js";
import { openStore, type OpenedStore } from "../../src/store/embedded.js";
import { RunRepository } from "../../src/store/run-repository.js";
import { LocalRunPages } from "../../src/ui/local-run-pages.js";
import { createRunPagesHandler } from "../../src/ui/run-pages-server.js";
import { lifecycleFailingTestOnce, storedOf } from "../ui/simulated-run.js";
import { chromiumMissing, launchBrowser } from "./browser.js";
import { decodeSettings } from "../../src/settings/index.js";

/** `UPDATE_SCREENSHOTS=1` writes the README's screenshots; otherwise they go to a temp dir. */
const SHOTS =
  process.env.UPDATE_SCREENSHOTS === "1"
    ? new URL("../../docs/images/", import.meta.url).pathname
    : mkdtempSync(join(tmpdir(), "cc-shots-"));

/**
 * The lifecycle example with its `test` command failing once, stopped while the second `test`
 * command runs: the page shows a failed visit, a node running, and that command's output live.
 */
function runningTest() {
  let tests = 0;
  return lifecycleFailingTestOnce(
    (activeNode) => ({
      pause: (effect) =>
        effect.type === "command.dispatch" &&
        effect.request.command.type === "script" &&
        activeNode() === "test" &&
        ++tests === 2,
    }),
    "live1",
  );
}

describe.skipIf(chromiumMissing() !== undefined)("a running run's page in Chromium", () => {
  let opened: OpenedStore;
  let server: Server;
  let browser: Browser;
  let base: string;
  const state = mkdtempSync(join(tmpdir(), "cc-live-"));
  const log = join(state, "devboxes", "live1-main", "agent.log");
  beforeAll(async () => {
    opened = await openStore({ settings: decodeSettings({}).store });
    const { stored, evidence } = storedOf(runningTest(), "local");
    await opened.store.createRun(stored);
    await opened.store.writeAfterEffects(evidence, []);
    // The running DevBox: a live one (its pid file) with a log the agent writes to.
    mkdirSync(join(state, "devboxes", "live1-main"), { recursive: true });
    writeFileSync(join(state, "devboxes", "live1-main", "pid"), "1\n");
    writeFileSync(log, "npm test\n");
    server = createServer();
    const pages = new LocalRunPages({
      host: {
        runs: new RunRepository(opened.store),
        resume: () => Promise.resolve(undefined),
        deliver: () => Promise.reject(new Error("the page answers nothing here")),
      },
      actor: "carol",
      stateDir: state,
      port: () => (server.address() as AddressInfo).port,
    });
    const handler = createRunPagesHandler(pages, opened.store, { assetDir: defaultAssetDir() });
    server.on("request", (req, res) => void handler(req, res));
    await new Promise<void>((listening) => server.listen(0, "127.0.0.1", () => listening()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await launchBrowser();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    server?.closeAllConnections();
    await new Promise<void>((closed) => server?.close(() => closed()));
    await opened?.close();
    rmSync(state, { recursive: true, force: true });
    if (process.env.UPDATE_SCREENSHOTS !== "1") rmSync(SHOTS, { recursive: true, force: true });
  });

  it("colours nodes by state, opens the failing step, and streams the command's output", async () => {
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(`${base}/runs/live1`);
    const fill = (node: string) =>
      page.evaluate<string>(
        `getComputedStyle(document.querySelector('svg.graph g[data-node="${node}"] rect')).fill`,
      );
    expect(await fill("requirements")).toBe("rgb(218, 251, 225)"); // succeeded: green
    expect(await fill("test")).toBe("rgb(221, 244, 255)"); // running: blue
    expect(await fill("deploy")).toBe("rgb(255, 255, 255)"); // not reached
    expect(await page.locator('svg.graph g[data-node="test"]').getAttribute("data-state")).toBe(
      "running",
    );
    // The failed visit of `test` is open, drawn red, with its time; the passed ones are closed.
    const failed = page.locator("details.visit.state-failed");
    expect(await failed.count()).toBe(1);
    expect(await failed.getAttribute("open")).toBe("");
    expect(await failed.locator(".outcome").textContent()).toBe("failed");
    expect(await failed.locator(".time").textContent()).toMatch(/^\d+\.\d s$/);
    expect(await page.locator("details.visit.state-succeeded[open]").count()).toBe(0);
    // The path taken is drawn heavier, the road not taken is not.
    expect(await page.locator("svg.graph g.edge.taken").count()).toBeGreaterThan(4);
    expect(
      await page
        .locator('svg.graph g.edge[data-from="review"][data-to="escalated"]')
        .getAttribute("class"),
    ).toBe("edge");

    // No edge label overlaps a node or another label, as Chromium draws them.
    const overlaps = await page.evaluate<number>(`(() => {
      const boxes = (selector) =>
        Array.from(document.querySelectorAll(selector)).map((element) => element.getBBox());
      const labels = boxes("svg.graph text.edge-label");
      const shapes = boxes("svg.graph rect, svg.graph ellipse");
      const hit = (a, b) =>
        a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
      if (labels.length < 8) return -1;
      return labels.flatMap((label, i) =>
        [...shapes, ...labels.slice(i + 1)].filter((other) => hit(label, other)),
      ).length;
    })()`);
    expect(overlaps).toBe(0);

    // The running command's output arrives as it is written, as text.
    const live = page.locator("pre.live");
    await expect.poll(() => live.textContent(), { timeout: 30_000 }).toContain("[main] npm test");
    appendFileSync(log, "PASS src/a.test.ts\n<b>not markup</b>\n");
    await expect
      .poll(() => live.textContent(), { timeout: 30_000 })
      .toContain("[main] <b>not markup</b>");
    expect(await live.locator("b").count()).toBe(0);
    await page.screenshot({ path: join(SHOTS, "run-page-live.png"), fullPage: true });
    expect(errors).toEqual([]);
  }, 120_000);
});
