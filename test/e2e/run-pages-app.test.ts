import type { Browser } from "playwright-core";
import { afterAll, describe, expect, it } from "vitest";
import { GATED, labeled, startPagesApp, type PagesApp } from "../ui/app-pages.js";
import { chromiumMissing, launchBrowser } from "./browser.js";

describe("the app's run pages in Chromium", () => {
  let browser: Browser | undefined;
  let pages: PagesApp | undefined;
  afterAll(async () => {
    await browser?.close();
    await pages?.close();
  });

  it("send an unsigned visitor through GitHub sign-in to the page, and refuse a read-only user's Approve", async (test) => {
    const missing = chromiumMissing();
    if (missing !== undefined) test.skip(missing);
    pages = await startPagesApp(GATED);
    const { app, base } = pages;
    app.github.permissions.set("alice", "write");
    app.github.permissions.set("rita", "read");
    await app.deliver("issues", labeled());
    const runId = (await app.waitForStatus("awaiting_input")).state.runId;
    const path = `/runs/Codertocat/Hello-World/${runId}`;

    browser = await launchBrowser();
    const context = await browser.newContext();
    const signIn = await context.newPage();
    // The browser is sent to GitHub's authorize page, which it cannot reach from the tests...
    const toGitHub = signIn.waitForEvent("request", (request) =>
      request.url().startsWith("https://github.com/"),
    );
    await signIn.goto(`${base}${path}`).catch(() => undefined);
    const authorize = new URL((await toGitHub).url());
    expect(authorize.origin + authorize.pathname).toBe("https://github.com/login/oauth/authorize");
    expect(authorize.searchParams.get("client_id")).toBe("Iv1.testclientid");
    expect(authorize.searchParams.get("redirect_uri")).toBe(`${base}/auth/callback`);
    // ...so the test plays GitHub: rita authorizes, and GitHub sends her back with a code (in a
    // new tab of the same browser, past the tab's error page).
    const state = authorize.searchParams.get("state") ?? "";
    const page = await context.newPage();
    await page.goto(`${base}/auth/callback?code=${pages.codeFor("rita")}&state=${state}`);
    expect(page.url()).toBe(`${base}${path}`);
    expect(await page.locator("footer .viewer").textContent()).toBe("Answering as rita");
    const graph = (await page.locator("svg.graph").textContent()) ?? "";
    expect(graph).toContain("build");
    expect(graph).toContain("gate");
    expect(await page.locator("h1 .status").textContent()).toBe("awaiting input");

    await page.getByRole("button", { name: "Approve" }).click();
    const result = page.locator('.answer-result[data-ok="false"]');
    await result.waitFor();
    expect(await result.textContent()).toBe(
      "ClusterCode did not accept this answer: @rita needs write access to Codertocat/Hello-World for this.",
    );
    expect((await app.host.store.getRun(runId))?.status).toBe("awaiting_input");
    expect(app.github.problems).toEqual([]);
    expect(app.errors).toEqual([]);
  }, 120_000);
});
