import type { PullRequestOpenedEvent, PullRequestSynchronizeEvent } from "@octokit/webhooks-types";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { payloadOf, startTestApp, type TestApp } from "./helpers/harness.js";

const BEFORE = `version: 1
name: ship
on:
  label: clustercode
nodes:
  build:
    kind: run
    run: make
  test:
    kind: run
    run: make test
edges:
  - { from: build, to: test }
  - { from: test, to: done }
`;

/** Adds a node (lint) and removes an edge (build → test), which lint now stands in. */
const AFTER = `version: 1
name: ship
on:
  label: clustercode
nodes:
  build:
    kind: run
    run: make
  lint:
    kind: run
    run: make lint
  test:
    kind: run
    run: make test
edges:
  - { from: build, to: lint }
  - { from: lint, to: test }
  - { from: test, to: done }
`;

const FILE = ".clustercode/workflow.yml";

function event<T>(action: "opened" | "synchronize", head: string) {
  return payloadOf<T & PullRequestOpenedEvent>("pull_request", action, (p) => {
    p.number = 21;
    p.pull_request.number = 21;
    p.pull_request.head.sha = head;
    p.pull_request.base.sha = "base000";
  });
}

describe("the graph's change in review", () => {
  let app: TestApp;
  beforeEach(async () => {
    app = await startTestApp(BEFORE);
    app.github.pullFiles.set(21, [{ filename: FILE, status: "modified" }]);
    app.github.setFile("base000", FILE, BEFORE);
  });
  afterEach(async () => {
    expect(app.github.problems).toEqual([]);
    expect(app.errors).toEqual([]);
    await app.close();
  });

  it("draws the added node and the removed edge in the check run and in one comment, edited in place", async () => {
    app.github.setFile("head111", FILE, AFTER);
    await app.deliver("pull_request", event<PullRequestOpenedEvent>("opened", "head111"));
    const [check] = app.github.calls("POST", /\/check-runs$/);
    const summary = (check?.body.output as { summary: string }).summary;
    expect(summary).toContain(
      "### `.clustercode/workflow.yml`: 1 node added, 2 edges added, 1 edge removed.",
    );
    expect(summary).toContain("```mermaid\nflowchart TD");
    expect(summary).toMatch(/n1\["\+ lint<br\/><small>run<\/small>"\]\n {2}class n1 added/);
    expect(summary).toMatch(/n0 -\.->\|"−"\| n2\n/);
    expect(summary).toContain("linkStyle 3 stroke:#cf222e");
    expect(summary).toContain("<summary>Before</summary>");
    const comments = app.github.comments.filter((comment) => comment.issue === 21);
    expect(comments).toHaveLength(1);
    expect(comments[0]?.body).toContain("<!-- clustercode:graph:pull-21 -->");
    expect(comments[0]?.body).toContain("1 node added, 2 edges added, 1 edge removed.");

    // A second push changes the new node: the same comment now says so.
    app.github.setFile("head222", FILE, AFTER.replace("run: make lint", "run: make lint-all"));
    await app.deliver("pull_request", event<PullRequestSynchronizeEvent>("synchronize", "head222"));
    const now = app.github.comments.filter((comment) => comment.issue === 21);
    expect(now).toHaveLength(1);
    expect(now[0]?.id).toBe(comments[0]?.id);
    expect(app.github.calls("PATCH", /\/issues\/comments\/\d+$/)).toHaveLength(1);
    expect(now[0]?.body).toContain("1 node added, 2 edges added, 1 edge removed.");
    expect(now[0]?.body).toContain("+ lint");
  });

  it("posts no comment when a pull request leaves the graph as it was", async () => {
    app.github.setFile("head333", FILE, BEFORE.replace("name: ship", "name: ship-it"));
    await app.deliver("pull_request", event<PullRequestOpenedEvent>("opened", "head333"));
    const [check] = app.github.calls("POST", /\/check-runs$/);
    const summary = (check?.body.output as { summary: string }).summary;
    expect(summary).not.toContain("The graph's change");
    expect(app.github.comments.filter((comment) => comment.issue === 21)).toHaveLength(0);
  });
});
