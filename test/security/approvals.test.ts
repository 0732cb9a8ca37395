import type {
  IssueCommentCreatedEvent,
  IssueCommentEditedEvent,
  IssuesLabeledEvent,
} from "@octokit/webhooks-types";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { payloadOf, startTestApp, type TestApp } from "../github/helpers/harness.js";

const GATED = `version: 1
name: ship
on:
  label: clustercode
nodes:
  build:
    kind: run
    run: echo built > built.txt
  gate:
    kind: approval
    prevent_self_approval: true
edges:
  - { from: build, to: gate }
  - { from: gate, to: done, label: approved }
  - { from: gate, to: failed, label: rejected }
`;

function comment(body: string, login: string, options: { issue?: number; bot?: boolean } = {}) {
  return payloadOf<IssueCommentCreatedEvent>("issue_comment", "created", (p) => {
    p.issue.number = options.issue ?? 9;
    delete p.issue.pull_request;
    p.comment.body = body;
    p.comment.user.login = login;
    p.sender.login = login;
    p.sender.type = options.bot === true ? "Bot" : "User";
  });
}

/** Every way of answering an approval that must not count, each refused with a reply. */
describe("approvals only permitted people can give", () => {
  let app: TestApp;
  let runId: string;
  beforeEach(async () => {
    app = await startTestApp(GATED);
    app.github.permissions.set("alice", "write");
    app.github.permissions.set("bob", "write");
    app.github.permissions.set("eve", "read");
    app.github.permissions.set("mallory", "none");
    await app.deliver(
      "issues",
      payloadOf<IssuesLabeledEvent>("issues", "labeled", (p) => {
        if (p.label !== undefined) p.label.name = "clustercode";
        p.issue.number = 9;
        p.sender.login = "alice";
        p.sender.type = "User";
      }),
    );
    runId = (await app.waitForStatus("awaiting_input")).state.runId;
  });
  afterEach(async () => {
    expect(app.github.problems).toEqual([]);
    expect(app.errors).toEqual([]);
    await app.close();
  });

  const answered = async () =>
    (await app.host.store.listEvidence(runId))
      .map((e) => e.entry as { kind: string })
      .filter((entry) => entry.kind === "approval.answered");

  async function refused(event: string, payload: object, reply: RegExp | undefined) {
    const before = app.github.comments.length;
    await app.deliver(event, payload);
    await app.host.idle();
    const replies = app.github.comments.slice(before).map((c) => c.body);
    if (reply === undefined) expect(replies).toEqual([]);
    else
      expect(
        replies.some((body) => reply.test(body)),
        replies.join("\n"),
      ).toBe(true);
    expect(await answered()).toEqual([]);
    expect((await app.host.store.getRun(runId))?.status).toBe("awaiting_input");
  }

  it("refuses a non-collaborator, a reader, the starter, another issue, a lookalike and an edit, each with a reply", async () => {
    await refused("issue_comment", comment("/approve", "mallory"), /mallory/);
    await refused("issue_comment", comment("/approve lgtm", "eve"), /eve/);
    // The starter, under prevent_self_approval.
    await refused("issue_comment", comment("/approve", "alice"), /alice/);
    await refused(
      "issue_comment",
      comment("/approve", "bob", { issue: 10 }),
      /there is no ClusterCode run here/,
    );
    // /аpprove with a Cyrillic а.
    await refused(
      "issue_comment",
      comment("/\u0430pprove", "bob"),
      /is not `\/approve`: it is spelled with lookalike or hidden characters/,
    );
    const edited = payloadOf<IssueCommentEditedEvent>("issue_comment", "edited", (p) => {
      p.issue.number = 9;
      delete p.issue.pull_request;
      p.comment.body = "/approve";
      p.comment.user.login = "bob";
      p.sender.login = "bob";
      p.sender.type = "User";
    });
    await refused("issue_comment", edited, /only in new comments/);
    // A bot's /approve is ignored without a reply (two bots must not answer each other).
    await refused("issue_comment", comment("/approve", "helper[bot]", { bot: true }), undefined);

    // The same approval from a permitted person, in a new comment, is taken.
    await app.deliver("issue_comment", comment("/approve", "bob"));
    expect((await app.waitForStatus("succeeded")).state.status).toBe("succeeded");
    expect(await answered()).toEqual([expect.objectContaining({ actor: "bob" })]);
  }, 60_000);
});
