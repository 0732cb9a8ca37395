import type { IssuesLabeledEvent } from "@octokit/webhooks-types";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { statusMarker } from "../../src/github/surfaces/render-status.js";
import { runIdOf } from "../../src/runtime/issue-run-creation.js";
import { readWorkflows } from "../../src/github/client/workflow-source.js";
import { BOT_LOGIN } from "../github/helpers/fake-github.js";
import { OWNER, payloadOf, REPO, startTestApp, type TestApp } from "../github/helpers/harness.js";

const WORKFLOW = `version: 1
name: ship
on:
  label: clustercode
  schedule:
    - cron: "0 6 * * *"
      brief: Nightly check
nodes:
  build:
    kind: run
    run: echo built > out.txt
  gate:
    kind: approval
edges:
  - { from: build, to: gate }
  - { from: gate, to: done, label: approved }
  - { from: gate, to: failed, label: rejected }
`;

/** Authors who may copy what the app writes: a person, and another app's bot. */
const IMPOSTORS = [
  { login: "mallory", type: "User" },
  { login: "other-app[bot]", type: "Bot" },
];

/** 06:00 UTC tomorrow: a minute the nightly schedule fires, after any registration now. */
const SIX = Math.floor(Date.now() / 86_400_000) * 86_400_000 + 86_400_000 + 6 * 3_600_000;
const TITLE = `ClusterCode: Nightly check (${new Date(SIX).toISOString().slice(0, 16).replace("T", " ")} UTC)`;

describe("the app adopts only what its own bot login wrote", () => {
  let app: TestApp;
  beforeEach(async () => {
    app = await startTestApp(WORKFLOW);
    app.github.permissions.set("alice", "write");
  });
  afterEach(async () => {
    expect(app.github.problems).toEqual([]);
    expect(app.errors).toEqual([]);
    await app.close();
  });

  it("posts its own status and approval comments beside copies of their markers", async () => {
    const delivery = "d-adopt-1";
    const runId = runIdOf(delivery, "ship");
    // Copies of every marker the run's comments will carry, posted before the app's own.
    const forged = [
      statusMarker(runId),
      ...[0, 1, 2, 3].map((visit) => `<!-- clustercode:approval:${runId}/${visit} -->`),
    ].join("\n");
    for (const [n, user] of IMPOSTORS.entries()) {
      app.github.comments.push({
        id: 1 + n,
        issue: 9,
        body: `${forged}\nforged by ${user.login}`,
        html_url: `https://github.com/c/${1 + n}`,
        user,
      });
    }
    const labeled = payloadOf<IssuesLabeledEvent>("issues", "labeled", (p) => {
      if (p.label !== undefined) p.label.name = "clustercode";
      p.issue.number = 9;
      p.sender.login = "alice";
      p.sender.type = "User";
    });
    await app.deliver("issues", labeled, delivery);
    await app.waitForStatus("awaiting_input");

    // The forged comments are untouched: never edited into the run's status.
    for (const [n, user] of IMPOSTORS.entries()) {
      expect(app.github.comments[n]?.body).toBe(`${forged}\nforged by ${user.login}`);
    }
    expect(app.github.calls("PATCH", /\/issues\/comments\/[12]$/)).toEqual([]);
    const own = app.github.comments.filter((c) => c.user.login === BOT_LOGIN);
    expect(own.filter((c) => c.body.includes(statusMarker(runId)))).toHaveLength(1);
    expect(own.filter((c) => c.body.includes("waits for approval of **gate**"))).toHaveLength(1);
  });

  it("opens its own tracking issue beside issues with its title by a person or another app", async () => {
    const repo = { owner: OWNER, repo: REPO, defaultBranch: "main" };
    await app.host.schedules.register(repo, await readWorkflows(await app.probot.auth(1), repo));
    for (const [n, user] of IMPOSTORS.entries()) {
      app.github.issues.push({ number: 60 + n, title: TITLE, body: "run this instead", user });
    }
    expect(await app.host.schedules.tick(SIX + 5_000)).toHaveLength(1);
    const { definition } = await app.waitForStatus("awaiting_input");
    expect(definition.branch).not.toMatch(/^clustercode\/6[01]-/);
    expect(app.github.calls("POST", /\/issues$/)).toHaveLength(1);
  });
});
