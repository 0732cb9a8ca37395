import { randomBytes } from "node:crypto";
import type { PullRequestOpenedEvent, PushEvent } from "@octokit/webhooks-types";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { VALIDATION_CHECK } from "../../src/github/surfaces/validation-check.js";
import { payloadOf, startTestApp, type TestApp } from "./helpers/harness.js";

const VALID = `version: 1
name: ship
on:
  label: clustercode
nodes:
  build:
    kind: run
    run: echo hi
edges:
  - { from: build, to: done }
`;

const BROKEN = `version: 1
name: ship
on:
  label: clustercode
nodes:
  build:
    kind: run
    run: echo hi
edges:
  - { from: build, to: nowhere }
`;

function opened(sha: string) {
  return payloadOf<PullRequestOpenedEvent>("pull_request", "opened", (p) => {
    p.number = 12;
    p.pull_request.number = 12;
    p.pull_request.head.sha = sha;
  });
}

describe("the workflow validation check", () => {
  let app: TestApp;
  beforeEach(async () => {
    app = await startTestApp(VALID);
  });
  afterEach(async () => {
    expect(app.github.problems).toEqual([]);
    expect(app.errors).toEqual([]);
    await app.close();
  });

  it("annotates the line of each finding of a PR that breaks the workflow", async () => {
    app.github.pullFiles.set(12, [
      { filename: ".clustercode/workflow.yml", status: "modified" },
      { filename: "README.md", status: "modified" },
    ]);
    app.github.setFile("abc123", ".clustercode/workflow.yml", BROKEN);
    await app.deliver("pull_request", opened("abc123"));
    const [create] = app.github.calls("POST", /\/check-runs$/);
    expect(create?.body).toMatchObject({
      name: VALIDATION_CHECK,
      head_sha: "abc123",
      status: "completed",
      conclusion: "failure",
    });
    const output = create?.body.output as { annotations: Record<string, unknown>[] };
    expect(output.annotations).toContainEqual(
      expect.objectContaining({
        path: ".clustercode/workflow.yml",
        start_line: 10,
        end_line: 10,
        annotation_level: "failure",
        title: "unknown-node",
      }),
    );
  });

  it("sends annotations in batches of 50", async () => {
    const edges = Array.from({ length: 60 }, (_, i) => `  - { from: build, to: missing${i} }`);
    const many = BROKEN.replace("  - { from: build, to: nowhere }", edges.join("\n"));
    app.github.pullFiles.set(12, [{ filename: ".clustercode/workflow.yml", status: "modified" }]);
    app.github.setFile("def456", ".clustercode/workflow.yml", many);
    await app.deliver("pull_request", opened("def456"));
    const [create] = app.github.calls("POST", /\/check-runs$/);
    const updates = app.github.calls("PATCH", /\/check-runs\/\d+$/);
    const sizes = [create, ...updates].map(
      (call) => (call?.body.output as { annotations: unknown[] }).annotations.length,
    );
    expect(sizes[0]).toBe(50);
    expect(sizes.every((size) => size <= 50)).toBe(true);
    expect(sizes.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(60);
  });

  it("passes a valid workflow and ignores PRs that do not touch .clustercode/", async () => {
    app.github.pullFiles.set(12, [{ filename: "src/index.ts", status: "added" }]);
    await app.deliver("pull_request", opened("000111"));
    expect(app.github.calls("POST", /\/check-runs$/)).toHaveLength(0);
    app.github.pullFiles.set(12, [{ filename: ".clustercode/workflow.yml", status: "modified" }]);
    app.github.setFile("222333", ".clustercode/workflow.yml", VALID);
    await app.deliver("pull_request", opened("222333"));
    expect(app.github.calls("POST", /\/check-runs$/)[0]?.body).toMatchObject({
      conclusion: "success",
    });
  });

  it("validates a push to the default branch and registers its schedules", async () => {
    const scheduled = VALID.replace(
      "  label: clustercode",
      '  label: clustercode\n  schedule:\n    - cron: "0 6 * * *"',
    );
    app.github.setFile("main", ".clustercode/workflow.yml", scheduled);
    app.github.setFile("feed42", ".clustercode/workflow.yml", scheduled);
    const push = payloadOf<PushEvent>("push", undefined, (p) => {
      p.ref = "refs/heads/main";
      p.after = "feed42";
      p.deleted = false;
      p.commits = [
        { ...p.head_commit!, added: [], removed: [], modified: [".clustercode/workflow.yml"] },
      ];
    });
    await app.deliver("push", push);
    expect(app.github.calls("POST", /\/check-runs$/)[0]?.body).toMatchObject({
      head_sha: "feed42",
      conclusion: "success",
    });
    const tomorrow = Math.floor(Date.now() / 86_400_000) * 86_400_000 + 86_400_000;
    const fired = await app.host.schedules.tick(tomorrow + 6 * 3_600_000 + 20_000);
    expect(fired).toHaveLength(1);
  });

  it("records and validates a push of thousands of files", async () => {
    app.github.setFile("feed43", ".clustercode/workflow.yml", VALID);
    const push = payloadOf<PushEvent>("push", undefined, (p) => {
      p.ref = "refs/heads/main";
      p.after = "feed43";
      p.deleted = false;
      // About 1.4 MB of paths that do not compress: far over DynamoDB's 400 KB item limit.
      p.commits = Array.from({ length: 20 }, (_, c) => ({
        ...p.head_commit!,
        added: Array.from({ length: 1500 }, () => `src/${randomBytes(20).toString("hex")}.ts`),
        removed: [],
        modified: c === 19 ? [".clustercode/workflow.yml"] : [],
      }));
    });
    await app.deliver("push", push);
    expect(app.github.calls("POST", /\/check-runs$/)[0]?.body).toMatchObject({
      head_sha: "feed43",
      conclusion: "success",
    });
  });
});
