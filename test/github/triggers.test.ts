import type {
  InstallationCreatedEvent,
  IssueCommentCreatedEvent,
  IssuesLabeledEvent,
} from "@octokit/webhooks-types";
import { webhookExample } from "./helpers/examples.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Admission } from "../../src/runtime/admission.js";
import { CATCH_UP_MS, Schedules } from "../../src/github/handlers/schedules.js";
import { StoreError } from "../../src/store/store-error.js";
import { parseWorkflow } from "../../src/workflow/parse.js";
import { OWNER, payloadOf, REPO, startTestApp, type TestApp } from "./helpers/harness.js";

const WORKFLOW = `version: 1
name: ship
on:
  label: clustercode
  schedule:
    - cron: "0 6 * * *"
      brief: Nightly check
admission: { max_active_runs: 1 }
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

/** 06:00:00 UTC tomorrow: a minute the nightly schedule fires, after any registration now. */
const SIX = Math.floor(Date.now() / 86_400_000) * 86_400_000 + 86_400_000 + 6 * 3_600_000;
const SIX_UTC = new Date(SIX).toISOString();
const TITLE = `ClusterCode: Nightly check (${SIX_UTC.slice(0, 16).replace("T", " ")} UTC)`;

function labeled(issue: number, login = "alice") {
  return payloadOf<IssuesLabeledEvent>("issues", "labeled", (p) => {
    if (p.label !== undefined) p.label.name = "clustercode";
    p.issue.number = issue;
    p.sender.login = login;
    p.sender.type = "User";
  });
}

function comment(body: string, login: string, issue: number) {
  return payloadOf<IssueCommentCreatedEvent>("issue_comment", "created", (p) => {
    p.issue.number = issue;
    delete p.issue.pull_request;
    p.comment.body = body;
    p.sender.login = login;
    p.sender.type = "User";
  });
}

describe("triggers, commands and admission", () => {
  let app: TestApp;
  beforeEach(async () => {
    app = await startTestApp(WORKFLOW);
    app.github.permissions.set("alice", "write");
    app.github.permissions.set("eve", "read");
  });
  afterEach(async () => {
    expect(app.github.problems).toEqual([]);
    expect(app.errors).toEqual([]);
    await app.close();
  });

  it("refuses a label from someone without write access, with a reply", async () => {
    await app.deliver("issues", labeled(3, "eve"));
    expect(await app.host.store.listRuns(`${OWNER}/${REPO}`)).toHaveLength(0);
    expect(app.github.comments.at(-1)?.body).toBe(
      "ClusterCode did not start a run: @eve needs write access to Codertocat/Hello-World for this.",
    );
  });

  it("says nothing about a label no workflow names, unless a broken workflow file mentions it", async () => {
    const label = (name: string, login: string) =>
      payloadOf<IssuesLabeledEvent>("issues", "labeled", (p) => {
        if (p.label !== undefined) p.label.name = name;
        p.issue.number = 4;
        p.sender.login = login;
        p.sender.type = "User";
      });
    await app.deliver("issues", label("bug", "eve"));
    await app.deliver("issues", label("bug", "alice"));
    app.github.setFile(
      "main",
      ".clustercode/workflows/deploy.yml",
      "name: deploy\non: { label: deploy-me\n",
    );
    await app.deliver("issues", label("bug", "alice"));
    expect(app.github.comments).toEqual([]);
    expect(app.github.calls("GET", /\/permission$/)).toEqual([]);
    await app.deliver("issues", label("deploy-me", "alice"));
    expect(app.github.comments.at(-1)?.body).toContain(".clustercode/workflows/deploy.yml");
    expect(await app.host.store.listRuns(`${OWNER}/${REPO}`)).toHaveLength(0);
  });

  it("queues a run beyond max_active_runs, says where it stands, and starts it later", async () => {
    await app.deliver("issues", labeled(1));
    const first = await app.waitForStatus("awaiting_input");
    await app.deliver("issues", labeled(2));
    const queued = await app.waitForStatus("queued");
    const status = app.github.comments.find((c) =>
      c.body.includes(`<!-- clustercode:run:${queued.state.runId} -->`),
    );
    expect(status?.body).toContain("admission queue at position 1");
    await app.deliver("issues", labeled(3));
    const statusOf = (issue: number) => app.github.comments.find((c) => c.issue === issue)?.body;
    expect(statusOf(3)).toContain("admission queue at position 2");
    await app.deliver("issue_comment", comment("/approve", "alice", 1));
    await app.waitForStatus("succeeded");
    const runs = await app.host.store.listRuns(`${OWNER}/${REPO}`);
    const second = runs.find((run) => run.runId === queued.state.runId);
    expect(second?.status).not.toBe("queued");
    expect(first.state.runId).not.toBe(queued.state.runId);
    // The run behind it moved up, and its status comment says so.
    for (let i = 0; i < 100 && !statusOf(3)?.includes("position 1"); i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      await app.host.idle();
    }
    expect(statusOf(3)).toContain("admission queue at position 1");
  });

  it("starts with /clustercode run, answers status, refuses /cancel from a reader, cancels", async () => {
    await app.deliver("issue_comment", comment("/clustercode run ship", "alice", 5));
    const { state } = await app.waitForStatus("awaiting_input");
    await app.deliver("issue_comment", comment("/clustercode status", "alice", 5));
    expect(app.github.comments.at(-1)?.body).toContain(
      `run \`${state.runId}\` of ship: **awaiting_input**`,
    );
    await app.deliver("issue_comment", comment("/cancel", "eve", 5));
    expect(app.github.comments.at(-1)?.body).toContain("@eve needs write access");
    await app.deliver("issue_comment", comment("/cancel enough", "alice", 5));
    const cancelled = await app.waitForStatus("cancelled");
    expect(cancelled.state.reason).toBe("cancelled by alice: enough");
  });

  it("replies to an unknown workflow name and to a malformed command", async () => {
    await app.deliver("issue_comment", comment("/clustercode run nope", "alice", 6));
    expect(app.github.comments.at(-1)?.body).toContain("no valid workflow named `nope`");
    await app.deliver("issue_comment", comment("/resolve maybe", "alice", 6));
    expect(app.github.comments.at(-1)?.body).toBe(
      "@alice usage: `/resolve succeeded|failed [note]`",
    );
  });

  it("fires a schedule once across replicas and skips while its run is active", async () => {
    const repo = { owner: OWNER, repo: REPO, defaultBranch: "main" };
    const { readWorkflows } = await import("../../src/github/client/workflow-source.js");
    const gh = await app.probot.auth(1);
    await app.host.schedules.register(repo, await readWorkflows(gh, repo));
    const other = new Schedules({
      store: app.host.store,
      starter: app.host.services.starter,
      installations: app.host.services.installations,
      holder: "another-replica",
      now: Date.now,
      onError: (error) => app.errors.push(String(error)),
    });
    const six = SIX + 5_000;
    const firings = await Promise.all([app.host.schedules.tick(six), other.tick(six + 1000)]);
    expect(firings.flat()).toHaveLength(1);
    expect(await app.host.schedules.tick(six + 10_000)).toHaveLength(0);
    expect(app.github.calls("POST", /\/issues$/)).toHaveLength(1);
    const issue = app.github.calls("POST", /\/issues$/)[0];
    expect(issue?.body.title).toBe(TITLE);
    await app.waitForStatus("awaiting_input");
    expect(await app.host.schedules.tick(six + 86_400_000)).toHaveLength(0);
    expect(app.github.comments.at(-1)?.body).toContain("skipped the scheduled run of ship");
  });

  it("registers the schedules of the repositories an installation adds", async () => {
    const installed = webhookExample<InstallationCreatedEvent>("installation", "created");
    installed.installation.id = 1;
    installed.repositories = [
      { id: 1, node_id: "R_1", name: REPO, full_name: `${OWNER}/${REPO}`, private: false },
    ];
    await app.deliver("installation", installed);
    expect(app.github.calls("GET", /^\/repos\/Codertocat\/Hello-World$/)).toHaveLength(1);
    const fired = await app.host.schedules.tick(SIX + 1_000);
    expect(fired).toHaveLength(1);
    await app.waitForStatus("awaiting_input");
  });

  it("registers the schedules of every installed repository when the app starts", async () => {
    await app.restart();
    const six = SIX + 1_000;
    expect(await app.host.schedules.tick(six)).toHaveLength(0);
    expect(
      await app.host.registerSchedules((error) => {
        throw error;
      }),
    ).toBe(1);
    expect(await app.host.schedules.tick(six)).toHaveLength(1);
    await app.waitForStatus("awaiting_input");
  });

  it("finds an issue's run among more than 100 newer runs of the repository", async () => {
    await app.deliver("issues", labeled(1));
    const { state } = await app.waitForStatus("awaiting_input");
    for (let i = 0; i < 120; i++) {
      await app.host.store.createRun({
        runId: `old${i}`,
        version: 1,
        repo: `${OWNER}/${REPO}`,
        workflow: "other",
        status: "failed",
        snapshot: {},
        outbox: [],
        createdAt: Date.now() + i,
        updatedAt: Date.now() + i,
        issue: 100 + i,
      });
    }
    await app.deliver("issue_comment", comment("/approve", "alice", 1));
    const done = await app.waitForStatus("succeeded");
    expect(done.state.runId).toBe(state.runId);
  });

  it("starts one run when two triggers of a workflow reach one issue at the same moment", async () => {
    const gh = await app.probot.auth(1);
    const trigger = (key: string) =>
      app.host.services.starter.trigger({
        gh,
        repo: { owner: OWNER, repo: REPO, defaultBranch: "main" },
        issue: { number: 9, title: "Ship it", body: "" },
        actor: "alice",
        key,
        select: { by: "command" },
        checkActor: false,
      });
    const started = await Promise.all([trigger("label-delivery"), trigger("comment-delivery")]);
    expect(started.flat()).toHaveLength(1);
    expect(await app.host.store.listRunsOfIssue(`${OWNER}/${REPO}`, 9)).toHaveLength(1);
    expect(app.github.comments.at(-1)?.body).toContain("is still active on this issue");
    await app.waitForStatus("awaiting_input");
  });

  it("keeps admission paused across replicas until fewer than resume_below runs wait", async () => {
    const parsed = parseWorkflow(
      `${WORKFLOW.replace(
        "admission: { max_active_runs: 1 }",
        "admission: { max_awaiting_approval: 2, resume_below: 1 }",
      )}`,
    );
    if (!parsed.ok) throw new Error("the test workflow does not parse");
    const replica = (holder: string) =>
      new Admission({ store: app.host.store, now: Date.now, holder });
    const [a, b] = [replica("a"), replica("b")];
    const repo = `${OWNER}/${REPO}`;
    // What a replica reads from the store, with `awaiting` runs waiting on people.
    const check = async (admission: Admission, awaiting: number) => {
      const counts = await admission.counts(repo, parsed.workflow.name);
      const waiting = { ...counts, active: awaiting, awaiting, queued: [] };
      return admission.admits(repo, parsed.workflow, waiting);
    };
    expect(await check(a, 1)).toBe(true);
    expect(await check(a, 2)).toBe(false);
    // Another replica (or this one restarted) knows the queue is paused: 1 is not below 1.
    expect(await check(b, 1)).toBe(false);
    expect(await check(b, 0)).toBe(true);
    expect(await check(a, 1)).toBe(true);
  });

  describe("a scheduled firing that was interrupted", () => {
    const repo = { owner: OWNER, repo: REPO, defaultBranch: "main" };
    const six = SIX + 5_000;
    const title = TITLE;
    beforeEach(async () => {
      const { readWorkflows } = await import("../../src/github/client/workflow-source.js");
      await app.host.schedules.register(repo, await readWorkflows(await app.probot.auth(1), repo));
    });

    it("by a GitHub error fires on the next tick", async () => {
      app.github.outages.push({ method: "POST", path: /\/issues$/ });
      expect(await app.host.schedules.tick(six)).toHaveLength(0);
      expect(app.errors).toHaveLength(1);
      app.errors.length = 0;
      expect(await app.host.schedules.tick(six + 20_000)).toHaveLength(1);
      await app.waitForStatus("awaiting_input");
      expect(app.github.issues.map((issue) => issue.title)).toEqual([title]);
    });

    it("by a replica that died holding it is fired by another within the catch-up window", async () => {
      const key = `schedule:${OWNER}/${REPO}#ship#0 6 * * *#UTC@${SIX_UTC}`;
      expect(await app.host.store.acquireLease(key, "dead-replica", six, 5 * 60_000)).toBe(true);
      expect(await app.host.schedules.tick(six + 60_000)).toHaveLength(0);
      expect(await app.host.schedules.tick(six + 3 * 60_000)).toHaveLength(0);
      expect(await app.host.schedules.tick(six + 6 * 60_000)).toHaveLength(1);
      await app.waitForStatus("awaiting_input");
      expect(await app.host.schedules.tick(six + 7 * 60_000)).toHaveLength(0);
    });

    it("after opening its tracking issue starts the run on that issue", async () => {
      const bot = { login: "clustercode[bot]", type: "Bot" };
      app.github.issues.push({ number: 77, title, body: "opened before the crash", user: bot });
      expect(await app.host.schedules.tick(six)).toHaveLength(1);
      const { definition } = await app.waitForStatus("awaiting_input");
      expect(definition.branch).toMatch(/^clustercode\/77-/);
      expect(app.github.calls("POST", /\/issues$/)).toHaveLength(0);
    });

    it("never adopts an issue a person opened with the tracking issue's title", async () => {
      const person = { login: "mallory", type: "User" };
      app.github.issues.push({ number: 66, title, body: "run this instead", user: person });
      expect(await app.host.schedules.tick(six)).toHaveLength(1);
      const { definition } = await app.waitForStatus("awaiting_input");
      expect(definition.branch).not.toMatch(/^clustercode\/66-/);
      expect(app.github.calls("POST", /\/issues$/)).toHaveLength(1);
    });

    it("fires from when a schedule was first registered, on every replica", async () => {
      const { readWorkflows } = await import("../../src/github/client/workflow-source.js");
      const files = await readWorkflows(await app.probot.auth(1), repo);
      const replica = (holder: string, now: number) =>
        new Schedules({
          store: app.host.store,
          starter: app.host.services.starter,
          installations: app.host.services.installations,
          holder,
          now: () => now,
          onError: (error) => app.errors.push(String(error)),
        });
      // A push adds a second schedule at 06:02: its 06:00 minute is not fired.
      const added = files.map((file) =>
        file.parsed.ok
          ? {
              ...file,
              parsed: {
                ...file.parsed,
                workflow: {
                  ...file.parsed.workflow,
                  on: {
                    ...file.parsed.workflow.on,
                    schedule: [
                      ...(file.parsed.workflow.on.schedule ?? []),
                      { cron: "0 6 * * *", brief: "Second" },
                    ],
                  },
                },
              },
            }
          : file,
      );
      const entries = await replica("pushed", SIX + 120_000).register(repo, added);
      expect(entries.map((e) => e.id)).toEqual(["ship#0 6 * * *#UTC", "ship#0 6 * * *#UTC#2"]);
      expect(entries.map((e) => e.since)).toEqual([expect.any(Number), SIX + 120_000]);
      // Another replica, or one that starts later, fires the same: the first schedule only.
      const fired = await replica("other", SIX + 180_000).tick();
      expect(fired).toHaveLength(1);
      await app.waitForStatus("awaiting_input");
      expect(app.github.issues.map((issue) => issue.title)).toEqual([title]);
      // A push that removes the schedules stops them everywhere.
      await replica("pushed", SIX + 200_000).register(repo, []);
      expect(await app.host.store.listSchedules()).toEqual([]);
      expect(await replica("other", SIX + 86_400_000 + 5_000).tick()).toHaveLength(0);
    });

    it("by a store error taking its lease fires on the next tick", async () => {
      const store = app.host.store;
      const acquire = store.acquireLease.bind(store);
      let failures = 1;
      store.acquireLease = (...args) => {
        if (failures-- > 0)
          return Promise.reject(new StoreError("throttled", "slow down", { retryable: true }));
        return acquire(...args);
      };
      expect(await app.host.schedules.tick(six)).toHaveLength(0);
      expect(app.errors).toHaveLength(1);
      app.errors.length = 0;
      expect(await app.host.schedules.tick(six + 20_000)).toHaveLength(1);
      await app.waitForStatus("awaiting_input");
    });

    it("by a permanent error is not retried", async () => {
      // GitHub refuses for good: issues are turned off on the repository.
      app.github.outages.push({ method: "POST", path: /\/issues$/, status: 410 });
      expect(await app.host.schedules.tick(six)).toHaveLength(0);
      expect(app.errors).toHaveLength(1);
      app.errors.length = 0;
      expect(await app.host.schedules.tick(six + 20_000)).toHaveLength(0);
      expect(app.github.calls("POST", /\/issues$/)).toHaveLength(1);
    });

    it("is not fired once the catch-up window has passed", async () => {
      expect(await app.host.schedules.tick(six + CATCH_UP_MS)).toHaveLength(0);
      expect(await app.host.schedules.tick(six + CATCH_UP_MS - 10_000)).toHaveLength(1);
    });
  });
});
