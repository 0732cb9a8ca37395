import type { IssueCommentEditedEvent } from "@octokit/webhooks-types";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../github/helpers/harness.js";
import { commentOn, labeledIssue, payloadOf } from "../helpers/payloads.js";

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
    await app.deliver("issues", labeledIssue(9));
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
    await refused("issue_comment", commentOn(9, "/approve", "mallory"), /mallory/);
    await refused("issue_comment", commentOn(9, "/approve lgtm", "eve"), /eve/);
    // The starter, under prevent_self_approval.
    await refused("issue_comment", commentOn(9, "/approve", "alice"), /alice/);
    await refused(
      "issue_comment",
      commentOn(10, "/approve", "bob"),
      /there is no ClusterCode run here/,
    );
    // /аpprove with a Cyrillic а.
    await refused(
      "issue_comment",
      commentOn(9, "/\u0430pprove", "bob"),
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
    await refused(
      "issue_comment",
      commentOn(9, "/approve", "helper[bot]", { bot: true }),
      undefined,
    );

    // The same approval from a permitted person, in a new comment, is taken.
    await app.deliver("issue_comment", commentOn(9, "/approve", "bob"));
    expect((await app.waitForStatus("succeeded")).state.status).toBe("succeeded");
    expect(await answered()).toEqual([expect.objectContaining({ actor: "bob" })]);
  }, 60_000);
});
