import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, describe, expect, it } from "vitest";
import { chromiumMissing, launchBrowser } from "./browser.js";
import { startCli } from "./local-cli.js";
import { parkRunAtApproval } from "./parked-run.js";
import { freePort } from "../helpers/free-port.js";

/** `UPDATE_SCREENSHOTS=1` writes the README's screenshots; otherwise they go to a temp dir. */
const SHOTS =
  process.env.UPDATE_SCREENSHOTS === "1"
    ? new URL("../../docs/images/", import.meta.url).pathname
    : mkdtempSync(join(tmpdir(), "cc-shots-"));

const NODES = [
  "requirements",
  "design",
  "implement",
  "test",
  "test-result",
  "review",
  "deploy-approval",
  "deploy",
  "monitor",
  "incident",
];

/** The URL `clustercode ui` prints once it listens. */
function printedUrl(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`no URL printed: ${out}`)), 30_000);
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const url = /(http:\/\/127\.0\.0\.1:\d+\/runs)\n/.exec(out)?.[1];
      if (url !== undefined) {
        clearTimeout(timer);
        resolve(url);
      }
    });
  });
}

describe("clustercode ui in Chromium", () => {
  let browser: Browser | undefined;
  let ui: ChildProcess | undefined;
  afterAll(async () => {
    await browser?.close();
    if (ui !== undefined && ui.exitCode === null) ui.kill("SIGKILL");
    if (process.env.UPDATE_SCREENSHOTS !== "1") rmSync(SHOTS, { recursive: true, force: true });
  });

  it("shows a run parked at an approval, its loop and its prototype, and follows it when Approve is clicked", async (test) => {
    const missing = chromiumMissing();
    if (missing !== undefined) test.skip(missing);
    const parked = await parkRunAtApproval();
    const port = await freePort();
    ui = startCli(
      ["ui", "--state-dir", parked.state, "--port", String(port), "--repo", parked.repo],
      {
        cwd: parked.repo,
        env: { ...parked.env, USER: "carol" },
      },
    );
    const url = await printedUrl(ui);
    expect(url).toBe(`http://127.0.0.1:${port}/runs`);

    browser = await launchBrowser();
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(`${url}/${parked.runId}`);
    expect(await page.locator("h1 .status").textContent()).toBe("awaiting input");
    const graph = (await page.locator("svg.graph").textContent()) ?? "";
    const table = (await page.locator("section.nodes").textContent()) ?? "";
    for (const node of NODES) {
      expect(graph).toContain(node);
      expect(table).toContain(node);
    }
    expect(await page.getByRole("button", { name: "Approve" }).isVisible()).toBe(true);
    expect(await page.getByRole("button", { name: "Reject" }).isVisible()).toBe(true);
    expect(await page.locator(".approval .message").textContent()).toBe(
      "Ship this change to production?",
    );
    await page.screenshot({ path: join(SHOTS, "run-page.png"), fullPage: true });

    // The loop: the first iteration's tests gate failed and its output was handed on.
    await page.locator("#visit-2 a.open-visit").click();
    await page.waitForURL(`${url}/${parked.runId}/visits/2`);
    const iterations = page.locator("article.iteration");
    expect(await iterations.count()).toBe(2);
    expect(await iterations.nth(0).locator("tr.fail td").first().textContent()).toBe("tests");
    expect(await iterations.nth(0).locator(".feedback h4").textContent()).toBe(
      "Feedback handed to iteration 2",
    );
    // Command output is text on the page, never markup.
    expect(await iterations.nth(0).locator("pre.output").nth(1).textContent()).toContain(
      "<script>window.pwned = 1</script> turns: 1",
    );
    expect(await page.evaluate(() => (globalThis as { pwned?: number }).pwned)).toBeUndefined();
    await page.screenshot({ path: join(SHOTS, "loop-page.png"), fullPage: true });

    // The prototype: two variants side by side, and the judge's reasoning.
    await page.goto(`${url}/${parked.runId}/visits/1`);
    const variants = page.locator("article.variant");
    expect(await variants.count()).toBe(2);
    expect(await variants.nth(1).locator("h3").textContent()).toBe("Variant 2 · winner");
    // Variant 1 passed its gate and lost the judging: passed, not cancelled.
    expect(await variants.nth(0).locator("dd.result").textContent()).toBe("passed");
    expect(await page.locator(".judge blockquote").textContent()).toBe(
      "Both designs work; this one is <b>smaller</b>.",
    );

    // Approve, and watch the page follow the run to its end without a reload.
    await page.goto(`${url}/${parked.runId}`);
    await page.evaluate(() => ((globalThis as { notReloaded?: boolean }).notReloaded = true));
    await page.getByRole("button", { name: "Approve" }).click();
    await page.locator('h1 .status[data-status="succeeded"]').waitFor({ timeout: 60_000 });
    expect(await page.evaluate(() => (globalThis as { notReloaded?: boolean }).notReloaded)).toBe(
      true,
    );
    expect(await page.locator("#visit-7 .outcome").textContent()).toBe("succeeded");
    expect(await page.locator("#visit-6 .accepted").textContent()).toMatch(
      /^approved by carol via run page at /,
    );
    expect(await page.getByRole("button", { name: "Approve" }).count()).toBe(0);
    expect(errors).toEqual([]);

    ui.kill("SIGINT");
    const code = await new Promise<number | null>((exited) => ui?.once("exit", exited));
    expect(code).toBe(0);
  }, 180_000);
});
