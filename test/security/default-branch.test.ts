import type { PullRequestOpenedEvent } from "@octokit/webhooks-types";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { blobSha } from "../github/helpers/fake-github.js";
import { startTestApp, type TestApp } from "../github/helpers/harness.js";
import { labeledIssue, payloadOf } from "../helpers/payloads.js";

const MAIN = `version: 1
name: ship
on: { label: clustercode }
nodes:
  build: { kind: run, run: echo built > built.txt }
`;

describe("workflows run only from the default branch", () => {
  let app: TestApp;
  afterEach(async () => {
    expect(app.github.problems).toEqual([]);
    await app.close();
  });

  it("never runs a workflow changed on a pull request branch: it is only validated", async () => {
    const canary = join(mkdtempSync(join(tmpdir(), "cc-pr-")), "ran");
    const changed = MAIN.replace("echo built > built.txt", `touch ${canary}`);
    app = await startTestApp(MAIN);
    app.github.permissions.set("alice", "write");
    app.github.setFile("feature-sha", ".clustercode/workflow.yml", changed);
    app.github.setFile("feature", ".clustercode/workflow.yml", changed);
    app.github.pullFiles.set(12, [{ filename: ".clustercode/workflow.yml", status: "modified" }]);
    let baseSha = "";
    await app.deliver(
      "pull_request",
      payloadOf<PullRequestOpenedEvent>("pull_request", "opened", (p) => {
        baseSha = p.pull_request.base.sha;
        p.number = 12;
        p.pull_request.number = 12;
        p.pull_request.head.sha = "feature-sha";
        p.pull_request.head.ref = "feature";
      }),
    );
    await app.deliver("issues", labeledIssue(12));
    const done = await app.waitForStatus("succeeded");
    // The run pinned the default branch's file, and the PR's command never ran. The check reads
    // the PR's head and base commits only to draw the graph's change.
    expect(done.definition.source?.sha).toBe(blobSha(MAIN));
    expect(existsSync(canary)).toBe(false);
    expect(
      app.github
        .calls("GET", /contents\/\.clustercode/)
        .filter((call) => !["feature-sha", baseSha].includes(call.query.get("ref") ?? ""))
        .every((call) => call.query.get("ref") === "main"),
    ).toBe(true);
  }, 60_000);
});
