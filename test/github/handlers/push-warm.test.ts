/**
 * A push to a repository's default branch renews its warm DevBoxes (see docs/warm-start.md);
 * a push elsewhere, or a branch deleted, does not. Neither touches `.clustercode/` in the first
 * tests, so the handler makes no GitHub call at all (the client throws if it does). A push that
 * changes the workflow makes the app read it and declare the warm DevBoxes it asks for: the
 * last tests run the whole app over the fake GitHub with real DevBox processes (`dist/`).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { PushEvent } from "@octokit/webhooks-types";
import { afterEach, describe, expect, it } from "vitest";
import { WARM_MARKER_FILE } from "../../../src/devbox/warm-marker.js";
import { labeledIssue, OWNER, payloadOf, REPO } from "../../helpers/payloads.js";
import { startTestApp, type TestApp } from "../helpers/harness.js";
import { onPush, type PushPayload } from "../../../src/github/handlers/push.js";
import type { AppServices, HandlerContext } from "../../../src/github/handlers/services.js";
import type { GitHub } from "../../../src/github/client/github.js";

function push(ref: string, deleted = false): PushPayload {
  return {
    ref,
    after: "b".repeat(40),
    deleted,
    commits: [{ added: ["src/index.ts"], modified: [], removed: [] }],
    repository: { name: "widgets", owner: { login: "acme" }, default_branch: "main" },
    sender: { login: "alice", type: "User" },
  };
}

function context(moved: string[]): HandlerContext {
  const gh = new Proxy({} as GitHub, {
    get: () => {
      throw new Error("the push handler called GitHub");
    },
  });
  const services = { defaultBranchMoved: (repo: string) => moved.push(repo) };
  return { gh, deliveryId: "d1", services: services as unknown as AppServices };
}

describe("a push and the warm DevBoxes", () => {
  it("renews those of the repository when its default branch moved", async () => {
    const moved: string[] = [];
    await onPush(push("refs/heads/main"), context(moved));
    expect(moved).toEqual(["acme/widgets"]);
  });

  it("leaves them when another branch moved or the push deleted a branch", async () => {
    const moved: string[] = [];
    await onPush(push("refs/heads/clustercode/7-r1"), context(moved));
    await onPush(push("refs/heads/main", true), context(moved));
    expect(moved).toEqual([]);
  });
});

const WORKFLOW = (devbox: string) => `version: 1
name: ship
on:
  label: clustercode
${devbox}
nodes:
  build:
    kind: run
    run: echo built > out.txt
edges:
  - { from: build, to: done }
`;
/** Appends to a file of the checkout: a claimed warm DevBox must not run it again. */
const WARM = WORKFLOW("devbox: { setup: [ 'echo ran >> .setup-runs' ], warm: 1 }");
const COLD = WORKFLOW("devbox: { setup: [ 'echo ran >> .setup-runs' ] }");

/** A push to `main` that changed the workflow file to `text` (on the fake GitHub). */
function workflowPush(app: TestApp, sha: string, text: string): PushEvent {
  app.github.setFile("main", ".clustercode/workflow.yml", text);
  app.github.setFile(sha, ".clustercode/workflow.yml", text);
  return payloadOf<PushEvent>("push", undefined, (p) => {
    p.ref = "refs/heads/main";
    p.after = sha;
    p.deleted = false;
    p.commits = [
      { ...p.head_commit!, added: [], removed: [], modified: [".clustercode/workflow.yml"] },
    ];
  });
}

/** The app's warm DevBoxes that are cloned and set up, waiting for a claim. */
function readyWarmDevBoxes(app: TestApp): string[] {
  const root = join(dirname(app.remote), "state", "warm");
  if (!existsSync(root)) return [];
  return readdirSync(root).filter((name) =>
    existsSync(join(root, name, "checkout", ".git", WARM_MARKER_FILE)),
  );
}

/** Polls (bounded) until `holds`. */
async function waitUntil(what: string, holds: () => boolean): Promise<void> {
  for (let i = 0; i < 1500; i++) {
    if (holds()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`gave up waiting until ${what}`);
}

describe("the default branch's workflows and the warm DevBoxes", () => {
  let app: TestApp | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it(
    "fill the pool when the app reads them, so the first claim after is warm",
    { timeout: 60_000 },
    async () => {
      // Real DevBox processes: the pool is the local executor's, as the app runs it.
      app = await startTestApp(COLD, { devboxes: "processes" });
      const started = app;
      expect(readyWarmDevBoxes(started)).toEqual([]);
      await started.deliver("push", workflowPush(started, "feed01", WARM));
      // No run has claimed anything yet: the pool learnt its spec from the default branch.
      await waitUntil("a warm DevBox is ready", () => readyWarmDevBoxes(started).length === 1);
      expect(await started.host.store.listRuns(`${OWNER}/${REPO}`, { limit: 10 })).toEqual([]);

      started.github.permissions.set("alice", "write");
      await started.deliver("issues", labeledIssue(7));
      const run = await started.waitForStatus("succeeded");
      const devboxes = join(dirname(started.remote), "state", "devboxes");
      const [devbox] = readdirSync(devboxes).filter((id) => id.startsWith(run.state.runId));
      const log = readFileSync(join(devboxes, devbox ?? "", "agent.log"), "utf8");
      expect(log).toContain("clustercode: set up while warm at");
      // The setup ran once, in the warm DevBox, before the run existed.
      const runs = readFileSync(join(devboxes, devbox ?? "", "checkout", ".setup-runs"), "utf8");
      expect(runs).toBe("ran\n");
      expect(started.github.problems).toEqual([]);
      expect(started.errors).toEqual([]);
    },
  );

  it(
    "let the pool go when a push drops `warm` from the workflow",
    { timeout: 60_000 },
    async () => {
      app = await startTestApp(COLD, { devboxes: "processes" });
      const started = app;
      await started.deliver("push", workflowPush(started, "feed01", WARM));
      await waitUntil("a warm DevBox is ready", () => readyWarmDevBoxes(started).length === 1);
      await started.deliver("push", workflowPush(started, "feed02", COLD));
      await waitUntil("the warm DevBoxes are gone", () => {
        const root = join(dirname(started.remote), "state", "warm");
        return !existsSync(root) || readdirSync(root).length === 0;
      });
      expect(started.github.problems).toEqual([]);
      expect(started.errors).toEqual([]);
    },
  );
});
