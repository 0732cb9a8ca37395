import type {
  IssueCommentCreatedEvent,
  IssuesLabeledEvent,
  StarCreatedEvent,
} from "@octokit/webhooks-types";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { OWNER, payloadOf, REPO, startTestApp, type TestApp } from "./helpers/harness.js";

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
    const recent = new Date(Date.now() - 60_000).toISOString();
    app.github.deliveries.push(
      { id: 11, guid: "g1", delivered_at: recent, status_code: 503, redelivery: false },
      { id: 12, guid: "g2", delivered_at: recent, status_code: 200, redelivery: false },
    );
    expect(await app.host.redelivery.reconcile()).toEqual([11]);
    const attempts = app.github.calls("POST", /^\/app\/hook\/deliveries\/\d+\/attempts$/);
    expect(attempts.map((call) => call.path)).toEqual(["/app/hook/deliveries/11/attempts"]);
    // The lease keeps a second pass (another replica) from doing it again in the period.
    const other = await app.host.store.acquireLease("webhook-redelivery", "other", Date.now(), 1);
    expect(other).toBe(false);
  });
});
