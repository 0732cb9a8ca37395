import type {
  IssueCommentCreatedEvent,
  IssuesLabeledEvent,
  StarCreatedEvent,
} from "@octokit/webhooks-types";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/harness.js";
import { OWNER, payloadOf, REPO } from "../helpers/payloads.js";

const WORKFLOW = `version: 1
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

describe("webhook intake and redelivery", () => {
  let app: TestApp;
  beforeEach(async () => {
    app = await startTestApp(WORKFLOW);
    app.github.permissions.set("alice", "admin");
  });
  afterEach(async () => {
    expect(app.github.problems).toEqual([]);
    expect(app.errors).toEqual([]);
    await app.close();
  });

  it("processes a delivery a crashed process recorded but never handled", async () => {
    const payload = payloadOf<IssuesLabeledEvent>("issues", "labeled", (p) => {
      if (p.label !== undefined) p.label.name = "clustercode";
      p.sender.login = "alice";
      p.sender.type = "User";
    });
    // As if a previous process acknowledged it and died before processing it.
    await app.host.store.recordDelivery({
      deliveryId: "left-behind",
      event: "issues",
      payload,
      receivedAt: Date.now() - 120_000,
      receivedBy: "a-process-that-died",
    });
    expect(await app.host.intake.sweep()).toBe(1);
    await app.host.idle();
    const done = await app.waitForStatus("succeeded");
    expect(done.state.status).toBe("succeeded");
    expect(await app.host.store.unprocessedDeliveries()).toEqual([]);
    // GitHub redelivering it later starts nothing new.
    await app.deliver("issues", payload, "left-behind");
    expect(await app.host.store.listRuns(`${OWNER}/${REPO}`)).toHaveLength(1);
  });

  it("starts a run on one issue while another issue's trigger lock is held", async () => {
    const labeled = (issue: number) =>
      payloadOf<IssuesLabeledEvent>("issues", "labeled", (p) => {
        if (p.label !== undefined) p.label.name = "clustercode";
        p.issue.number = issue;
        p.sender.login = "alice";
        p.sender.type = "User";
      });
    const repo = `${OWNER}/${REPO}`;
    // Another replica is starting a run on issue 1, and holds its lock for the whole test.
    const lock = `trigger:${repo}#1#ship`;
    expect(await app.host.store.acquireLease(lock, "another-replica", Date.now(), 60_000)).toBe(
      true,
    );
    await app.probot.receive({ id: "on-1", name: "issues", payload: labeled(1) } as never);
    await app.probot.receive({ id: "on-2", name: "issues", payload: labeled(2) } as never);
    const runsOf = (issue: number) => app.host.store.listRunsOfIssue(repo, issue);
    for (let i = 0; i < 200 && (await runsOf(2)).length === 0; i++) await sleep(25);
    expect(await runsOf(2)).toHaveLength(1);
    expect(await runsOf(1)).toEqual([]);
    // Once the lock is free, issue 1's delivery starts its run too.
    await app.host.store.releaseLease(lock, "another-replica");
    await app.host.idle();
    expect(await runsOf(1)).toHaveLength(1);
  });

  it("records only deliveries that could make it do something", async () => {
    const comment = (body: string) =>
      payloadOf<IssueCommentCreatedEvent>("issue_comment", "created", (p) => {
        p.comment.body = body;
        p.sender.type = "User";
      });
    const seen = async (id: string) =>
      !(await app.host.store.recordDelivery({
        deliveryId: id,
        event: "x",
        payload: {},
        receivedAt: 0,
      }));
    await app.deliver("issue_comment", comment("Looks good to me"), "chatter");
    await app.deliver("issue_comment", comment("/clustercode status"), "command");
    await app.deliver(
      "star",
      payloadOf<StarCreatedEvent>("star", "created", () => undefined),
      "star",
    );
    const labeledByBot = payloadOf<IssuesLabeledEvent>("issues", "labeled", (p) => {
      p.sender.type = "Bot";
    });
    await app.deliver("issues", labeledByBot, "bot-label");
    expect(await seen("chatter")).toBe(false);
    expect(await seen("star")).toBe(false);
    expect(await seen("bot-label")).toBe(false);
    expect(await seen("command")).toBe(true);
    // The command was processed: there is no run here, and the reply says so.
    expect(app.github.comments.at(-1)?.body).toContain("there is no ClusterCode run here");
  });

  it("asks GitHub to redeliver failed deliveries, with the app's JWT", async () => {
    const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString();
    const delivery = (id: number, minutes: number, status: number) => ({
      id,
      guid: `g${id}`,
      delivered_at: minutesAgo(minutes),
      status_code: status,
      redelivery: false,
    });
    // Four pages of deliveries, newest first: recent failures on the first two; the third
    // reaches past the six-hour window (its failures are too old), so the fourth is not read.
    app.github.deliveries.push(delivery(11, 1, 503), delivery(12, 1, 200));
    for (let id = 100; id < 298; id++) app.github.deliveries.push(delivery(id, 2, 200));
    app.github.deliveries.push(delivery(13, 7 * 60, 500), delivery(14, 7 * 60, 502));
    for (let id = 300; id < 400; id++) app.github.deliveries.push(delivery(id, 8 * 60, 500));
    // GitHub refuses one redelivery: the others are still asked for.
    app.github.outages.push({ method: "POST", path: /deliveries\/11\/attempts$/, status: 422 });
    app.github.deliveries.splice(150, 0, delivery(15, 3, 0));
    expect(await app.host.redelivery.reconcile()).toEqual([15]);
    expect(app.errors).toEqual([expect.stringContaining("redeliver g11")]);
    app.errors.length = 0;
    expect(app.github.calls("GET", /^\/app\/hook\/deliveries$/)).toHaveLength(3);
    const attempts = app.github.calls("POST", /^\/app\/hook\/deliveries\/\d+\/attempts$/);
    expect(attempts.map((call) => call.path)).toEqual([
      "/app/hook/deliveries/11/attempts",
      "/app/hook/deliveries/15/attempts",
    ]);
    // The lease keeps a second pass (another replica) from doing it again in the period.
    const other = await app.host.store.acquireLease("webhook-redelivery", "other", Date.now(), 1);
    expect(other).toBe(false);
  });
});
