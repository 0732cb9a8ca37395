import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { marked } from "marked";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CheckRun } from "../github/helpers/fake-github.js";
import { startTestApp, type TestApp } from "../github/helpers/harness.js";
import { labeledIssue } from "../helpers/payloads.js";
import { chromiumMissing, launchBrowser } from "./browser.js";

/**
 * The README's pictures of what a run shows on GitHub, taken from what the app really posts:
 * a run of the first workflow (`clustercode init`'s) is driven through the app to its approval,
 * and the status comment and check runs it wrote are rendered as GitHub renders Markdown (GFM,
 * with Mermaid diagrams drawn) and photographed in Chromium. `UPDATE_SCREENSHOTS=1` writes them
 * to docs/images/; otherwise they go to a temporary directory.
 */
const SHOTS =
  process.env.UPDATE_SCREENSHOTS === "1"
    ? new URL("../../docs/images/", import.meta.url).pathname
    : mkdtempSync(join(tmpdir(), "cc-shots-"));

const FIRST_WORKFLOW = readFileSync(
  new URL("../../workflows-schema/examples/first-workflow.yml", import.meta.url),
  "utf8",
).replace(/^on:\n.*\n/m, "on:\n  label: clustercode\n");

const NODES = ["survey", "notes", "review"];

const MERMAID = createRequire(import.meta.url).resolve("mermaid/dist/mermaid.min.js");

/** A page framed like a GitHub comment or check run, the Markdown rendered as GFM. */
function githubFrame(heading: string, markdown: string): string {
  const body = marked
    .parse(markdown, { gfm: true, async: false })
    .replace(
      /<pre><code class="language-mermaid">([\s\S]*?)<\/code><\/pre>/g,
      '<pre class="mermaid">$1</pre>',
    );
  return `<!doctype html><html><head><meta charset="utf-8"><style>
    body { font: 14px -apple-system, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif;
           color: #1f2328; background: #fff; margin: 16px; width: 860px; }
    .box { border: 1px solid #d1d9e0; border-radius: 6px; }
    .head { background: #f6f8fa; border-bottom: 1px solid #d1d9e0; padding: 8px 16px;
            border-radius: 6px 6px 0 0; color: #59636e; }
    .head b { color: #1f2328; }
    .md { padding: 16px; line-height: 1.5; }
    .md table { border-collapse: collapse; }
    .md th, .md td { border: 1px solid #d1d9e0; padding: 6px 13px; }
    .md tr:nth-child(2n) { background: #f6f8fa; }
    .md code { background: #eff1f3; border-radius: 6px; padding: 0.2em 0.4em; font-size: 85%; }
    .md pre.mermaid { background: none; text-align: center; }
    .md a { color: #0969da; text-decoration: none; }
    .md h1, .md h2, .md h3 { border-bottom: 1px solid #d1d9e0; padding-bottom: .3em; }
  </style></head><body><div class="box"><div class="head">${heading}</div>
  <div class="md">${body}</div></div></body></html>`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Renders one page, draws its Mermaid blocks, and saves a picture of it. */
async function photograph(page: Page, html: string, file: string): Promise<string> {
  await page.setContent(html);
  await page.addScriptTag({ path: MERMAID });
  await page.evaluate(async () => {
    const mermaid = (globalThis as unknown as { mermaid: { run(): Promise<void> } }).mermaid;
    await mermaid.run();
  });
  await page.locator(".box").screenshot({ path: join(SHOTS, file) });
  return page.locator(".box").innerText();
}

function output(run: CheckRun): { title?: string; summary?: string; text?: string } {
  return run.output ?? {};
}

const missing = chromiumMissing();

describe.skipIf(missing !== undefined)(
  "pictures of a run on GitHub, from what the app posts",
  () => {
    let app: TestApp;
    let browser: Browser;
    let page: Page;
    let runId: string;
    beforeAll(async () => {
      app = await startTestApp(FIRST_WORKFLOW);
      app.github.permissions.set("alice", "write");
      await app.deliver(
        "issues",
        labeledIssue(12, "alice", (p) => {
          p.issue.title = "Document the repository";
        }),
      );
      runId = (await app.waitForStatus("awaiting_input", 60_000)).state.runId;
      browser = await launchBrowser();
      page = await browser.newPage({ deviceScaleFactor: 1 });
    }, 90_000);
    afterAll(async () => {
      await browser?.close();
      await app?.close();
      if (process.env.UPDATE_SCREENSHOTS !== "1") rmSync(SHOTS, { recursive: true, force: true });
    });

    it("shows the status comment with its graph, the nodes visited and the waiting approval", async () => {
      const status = app.github.comments.find((c) =>
        c.body.includes(`<!-- clustercode:run:${runId} -->`),
      );
      expect(status).toBeDefined();
      const text = await photograph(
        page,
        githubFrame("<b>clustercode</b> <span>bot commented</span>", status?.body ?? ""),
        "status-comment.png",
      );
      expect(text).toContain("awaiting input");
      for (const node of NODES) expect(text).toContain(node);
      // The Mermaid block was drawn as GitHub draws it, with every node in the diagram.
      const diagram = await page.locator("pre.mermaid svg").textContent();
      for (const node of NODES) expect(diagram).toContain(node);
    });

    it("shows the run's check runs and the approval waiting with its buttons", async () => {
      const latest = new Map<string, CheckRun>();
      for (const run of app.github.checkRuns) latest.set(String(run.external_id), run);
      const runs = [...latest.values()];
      const approval = runs.find((run) => run.conclusion === "action_required");
      expect(approval).toBeDefined();
      const list = runs
        .map(
          (run) =>
            `| ${String(run.conclusion ?? run.status)} | **${String(run.name)}** | ${output(run).title ?? ""} |`,
        )
        .join("\n");
      const { title = "", summary = "", text = "" } = output(approval as CheckRun);
      const buttons = ((approval?.actions ?? []) as { label: string }[])
        .map((action) => `<button>${escapeHtml(action.label)}</button>`)
        .join(" ");
      const markdown = `| state | check | |\n|---|---|---|\n${list}\n\n---\n\n### ${title}\n\n${summary}\n\n${text}`;
      const shown = await photograph(
        page,
        githubFrame(`<b>Checks</b> on the run branch ${buttons}`, markdown),
        "check-runs.png",
      );
      expect(shown).toContain("Approve");
      expect(shown).toContain("Reject");
      expect(shown).toContain("review");
      expect(runs.map((run) => String(run.name))).toEqual(
        expect.arrayContaining([expect.stringContaining("first-workflow")]),
      );
    });
  },
);

if (missing !== undefined) {
  describe("pictures of a run on GitHub", () => {
    it.skip(missing, () => undefined);
  });
}
