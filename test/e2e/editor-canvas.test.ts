import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundleEditor } from "../../src/editor/bundle-editor.js";
import { startLocalEditor, type LocalEditor } from "../editor/local-editor.js";
import { chromiumMissing, launchBrowser } from "./browser.js";
import { runCli } from "./local-cli.js";
import { parkRunAtApproval } from "./parked-run.js";

/** The seed's ten-node lifecycle, node by node: kind, then the side panel's fields. */
const NODES: [string, string, Record<string, string>][] = [
  [
    "requirements",
    "run",
    {
      agent: "{ engine: claude, model: claude-sonnet-4-5 }",
      prompt:
        "Read the repository and the issue, and write the requirements down once in REQUIREMENTS.md.",
    },
  ],
  [
    "design",
    "prototype",
    {
      brief: "Propose a design for REQUIREMENTS.md in DESIGN.md.",
      variants:
        "[{ engine: claude, model: claude-opus-4-1 }, { engine: codex, model: gpt-5-codex }]",
      gates: "[{ name: design-written, run: test -s DESIGN.md }]",
      select: "judge",
      judge: "{ provider: anthropic, model: claude-opus-4-1 }",
    },
  ],
  [
    "implement",
    "loop",
    {
      goal: "Implement DESIGN.md until the tests and the linter pass.",
      agent: "{ engine: claude, model: claude-sonnet-4-5 }",
      gates: "[{ name: tests, run: npm test }, { name: lint, run: npm run lint }]",
      budget:
        "{ max_iterations: 8, max_cost_per_iteration_usd: 3, max_daily_cost_usd: 60, wall_clock: 3h }",
    },
  ],
  ["test", "run", { run: "npm test" }],
  ["test-result", "decision", { evaluator: "status" }],
  [
    "review",
    "decision",
    {
      evaluator: "agent",
      question: "Does the change meet REQUIREMENTS.md without unrelated edits?",
      judge: "{ provider: anthropic, model: claude-opus-4-1 }",
    },
  ],
  [
    "deploy-approval",
    "approval",
    { message: "Ship this change to production?", timeout: "24h", on_timeout: "rejected" },
  ],
  ["deploy", "run", { run: "./scripts/deploy.sh", idempotent: "false" }],
  ["monitor", "run", { run: "./scripts/check-incidents.sh > incident.txt" }],
  ["incident", "decision", { evaluator: "deterministic", run: "test -s incident.txt" }],
];

/** Its edges: from, to, label, back-edge cap. */
const EDGES: [string, string, string?, number?][] = [
  ["design", "implement"],
  ["implement", "test"],
  ["test", "test-result"],
  ["test-result", "review", "succeeded"],
  ["test-result", "implement", "failed", 3],
  ["test-result", "escalated", "exhausted"],
  ["review", "deploy-approval", "approved"],
  ["review", "implement", "needs-changes", 2],
  ["review", "escalated", "exhausted"],
  ["deploy-approval", "deploy", "approved"],
  ["deploy-approval", "failed", "rejected"],
  ["deploy", "monitor"],
  ["monitor", "incident"],
  ["incident", "requirements", "pass", 3],
  ["incident", "done", "fail"],
  ["incident", "escalated", "exhausted"],
];

const PATH = ".clustercode/workflows/lifecycle.yml";

/** Adds a node from the keyboard (N), names it and fills its fields in the side panel. */
async function addNode(page: Page, [id, kind, fields]: (typeof NODES)[number]): Promise<void> {
  await page.selectOption("#kind", kind);
  await page.locator("#canvas").focus();
  await page.keyboard.press("n");
  await page.fill("#field-id", id);
  await page.press("#field-id", "Tab");
  await page.locator(`[data-node="${id}"]`).waitFor();
  for (const [key, value] of Object.entries(fields)) await setField(page, key, value);
}

async function setField(page: Page, key: string, value: string): Promise<void> {
  const field = page.locator(`#field-${key}`);
  if ((await page.locator(`select#field-${key}`).count()) === 1) await field.selectOption(value);
  else {
    await field.fill(value);
    await field.press("Tab");
  }
}

/** Connects two nodes from the keyboard: focus the source, C, pick the target, Connect. */
async function connect(page: Page, [from, to, label, cap]: (typeof EDGES)[number]): Promise<void> {
  await page.locator(`[data-node="${from}"]`).focus();
  await page.keyboard.press("c");
  await page.selectOption("#connect-to", to);
  await page.click("#connect");
  if (label !== undefined) await setField(page, "label", label);
  if (cap !== undefined) {
    await setField(page, "back", "true");
    await setField(page, "max_traversals", String(cap));
  }
}

/** Drags from a node's bottom handle onto another box. */
async function drag(page: Page, from: string, to: string): Promise<void> {
  const port = await page.locator(`[data-port="${from}"]`).boundingBox();
  const target = await page
    .locator(`[data-node="${to}"] rect, [data-node="${to}"] ellipse`)
    .first()
    .boundingBox();
  if (port === null || target === null) throw new Error("not on screen");
  await page.mouse.move(port.x + port.width / 2, port.y + port.height / 2);
  await page.mouse.down();
  await page.mouse.move(target.x + target.width / 2, target.y + target.height / 2, { steps: 8 });
  await page.mouse.up();
}

const findingRules = async (page: Page) =>
  Promise.all(
    (await page.locator("#findings li[data-rule]").all()).map((item) =>
      item.getAttribute("data-rule"),
    ),
  );

describe("the workflow editor in Chromium", () => {
  let browser: Browser | undefined;
  let editor: LocalEditor;
  beforeAll(async () => {
    await bundleEditor();
    editor = await startLocalEditor({
      ".clustercode/workflow.yml":
        "# Keep this comment: it explains the workflow.\nversion: 1\nname: main\non:\n  label: clustercode # the label people add\nnodes:\n  build:\n    kind: run\n    run: make\nedges:\n  - { from: build, to: done }\n",
    });
  });
  afterAll(async () => {
    await browser?.close();
    await editor.close();
  });

  it("builds the ten-node lifecycle from an empty canvas by clicks and keys; the file validates and runs", async (test) => {
    const missing = chromiumMissing();
    if (missing !== undefined) test.skip(missing);
    browser = await launchBrowser();
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    await page.goto(`${editor.base}/workflows/${PATH}/edit`);
    await page.locator("body[data-ready=true]").waitFor();
    for (const node of NODES) await addNode(page, node);
    await drag(page, "requirements", "design");
    for (const edge of EDGES) await connect(page, edge);
    await page.locator("#layout").click();

    // The incident check is a command: "yes" is not one of its labels, and the validator says so.
    await page.locator('[data-edge="14"]').focus();
    await setField(page, "label", "yes");
    expect(await findingRules(page)).toContain("impossible-label");
    await expect.poll(() => page.locator('[data-edge="14"].has-error').count()).toBe(1);
    await setField(page, "label", "pass");
    expect(await findingRules(page)).not.toContain("impossible-label");
    expect(await page.locator(".has-error").count()).toBe(0);

    await page.keyboard.press("Control+s");
    await page.locator("#status[data-ok=true]").waitFor();
    const saved = readFileSync(join(editor.root, PATH), "utf8");
    expect(saved).toContain(
      "  - { from: incident, to: requirements, label: pass, back: true, max_traversals: 3 }",
    );
    const validated = await runCli(["validate", join(editor.root, PATH), "--format", "json"], {
      cwd: editor.root,
    });
    expect(validated.code).toBe(0);
    const parked = await parkRunAtApproval(saved);
    expect(parked.runId).not.toBe("");
  }, 300_000);

  it("keeps the comments of a file it edits, and undoes and redoes from the keyboard", async (test) => {
    const missing = chromiumMissing();
    if (missing !== undefined) test.skip(missing);
    browser ??= await launchBrowser();
    const page = await browser.newPage();
    await page.goto(`${editor.base}/workflows/.clustercode/workflow.yml/edit`);
    await page.locator("body[data-ready=true]").waitFor();
    await page.locator('[data-node="build"]').focus();
    await setField(page, "run", "make all");
    await setField(page, "title", "Build it");
    await page.locator("#canvas").focus();
    await page.keyboard.press("Control+z");
    expect(await page.locator('[data-node="build"] text').first().textContent()).toBe("build");
    await page.keyboard.press("Control+y");
    expect(await page.locator('[data-node="build"] text').first().textContent()).toBe("Build it");
    await page.click("#save");
    await page.locator("#status[data-ok=true]").waitFor();
    const saved = readFileSync(join(editor.root, ".clustercode/workflow.yml"), "utf8");
    expect(saved).toContain("# Keep this comment: it explains the workflow.");
    expect(saved).toContain("label: clustercode # the label people add");
    expect(saved).toContain("    run: make all\n    title: Build it\n");
  });
});
