import type { CheckRunRequestedActionEvent } from "@octokit/webhooks-types";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/harness.js";
import { commentOn, labeledIssue, payloadOf } from "../helpers/payloads.js";

/** A marker file the build checks, so a test decides when the build fails. */
const marks = mkdtempSync(join(tmpdir(), "cc-answers-"));
const READY = join(marks, "ready");

const GATED = `version: 1
name: ship
on:
  label: clustercode
nodes:
  build:
    kind: run
    run: test -e ${READY} && date > built.txt
  gate:
    kind: approval
    approvers: ["@Codertocat/reviewers", "@carol"]
    prevent_self_approval: true
edges:
  - { from: build, to: gate }
  - { from: gate, to: done, label: approved }
  - { from: gate, to: failed, label: rejected }
`;

const DEPLOY = `version: 1
name: deploy
on:
  label: clustercode
nodes:
  deploy:
    kind: run
    idempotent: false
    run: touch ${join(marks, "deploying")} && sleep 30
`;

const labeled = () => labeledIssue(9);

const COMMENT_URL = "https://github.com/Codertocat/Hello-World/issues/9#issuecomment-1";

const comment = (body: string, login: string) => commentOn(9, body, login, { url: COMMENT_URL });

/** The reply the app posted last. */
function lastReply(app: TestApp): string | undefined {
  return app.github.comments.at(-1)?.body;
}

async function answersOf(app: TestApp, runId: string) {
  return (await app.host.store.listEvidence(runId))
    .map((e) => e.entry as { kind: string })
    .filter((entry) => ["approval.answered", "lost.resolved", "run.retried"].includes(entry.kind));
}

describe("answers to a run", () => {
  let app: TestApp;
  afterAll(() => rmSync(marks, { recursive: true, force: true }));
  afterEach(async () => {
    expect(app.github.problems).toEqual([]);
    expect(app.errors).toEqual([]);
    await app.close();
    rmSync(READY, { force: true });
  });

  describe("with approvers and prevent_self_approval", () => {
    beforeEach(async () => {
      app = await startTestApp(GATED);
      for (const login of ["alice", "dave", "eve"]) app.github.permissions.set(login, "write");
      app.github.teams.set("Codertocat/reviewers", new Set(["alice", "dave"]));
    });

    it("retries a failed build on /retry, then takes approval only from an approver who did not start it", async () => {
      await app.deliver("issues", labeled());
      const failed = await app.waitForStatus("failed");
      const runId = failed.state.runId;
      await app.deliver("issue_comment", comment("/retry", "mallory"));
      expect(lastReply(app)).toContain("@mallory needs write access");
      writeFileSync(READY, "");
      await app.deliver("issue_comment", comment("/retry", "alice"));
      const waiting = await app.waitForStatus("awaiting_input");
      expect(waiting.state.runId).toBe(runId);
      expect(waiting.state.visits.map((v) => `${v.node}#${v.attempt}:${v.outcome ?? ""}`)).toEqual([
        "build#1:failed",
        "build#2:succeeded",
        "gate#1:",
      ]);

      expect(app.github.calls("POST", /requested_reviewers$/).map((call) => call.body)).toEqual([
        { reviewers: ["carol"], team_reviewers: ["reviewers"] },
      ]);
      // alice is on the team, but she started the run; eve may write, but is no approver.
      await app.deliver("issue_comment", comment("/approve", "alice"));
      expect(lastReply(app)).toBe(
        `ClusterCode did not apply this to run \`${runId}\`: alice started this run and gate does not allow self-approval.`,
      );
      await app.deliver("issue_comment", comment("/approve", "eve"));
      expect(lastReply(app)).toBe(
        "ClusterCode did not accept this answer: @eve is not among the approvers (@Codertocat/reviewers, @carol).",
      );
      expect((await app.host.store.getRun(runId))?.status).toBe("awaiting_input");
      expect((await answersOf(app, runId)).map((entry) => entry.kind)).toEqual(["run.retried"]);

      await app.deliver("issue_comment", comment("/approve looks right", "dave"));
      await app.waitForStatus("succeeded");
      expect(await answersOf(app, runId)).toEqual([
        expect.objectContaining({ kind: "run.retried", actor: "alice", where: COMMENT_URL }),
        expect.objectContaining({ actor: "dave", decision: "approved", note: "looks right" }),
      ]);
    });

    it("does not retry a failed run that a newer run of its workflow followed", async () => {
      await app.deliver("issues", labeled());
      const failed = await app.waitForStatus("failed");
      writeFileSync(READY, "");
      await app.deliver("issues", labeled());
      const { state } = await app.waitForStatus("awaiting_input");
      await app.deliver("issue_comment", comment("/retry", "alice"));
      expect(lastReply(app)).toBe(
        `ClusterCode did not apply this to run \`${state.runId}\`: only a failed run, or a lost node waiting for an answer, can be retried.`,
      );
      expect((await app.host.store.getRun(failed.state.runId))?.status).toBe("failed");
    });

    it("ends the run failed on /reject, with the reason as evidence", async () => {
      writeFileSync(READY, "");
      await app.deliver("issues", labeled());
      const { state } = await app.waitForStatus("awaiting_input");
      await app.deliver("issue_comment", comment("/reject too risky", "carol"));
      const failed = await app.waitForStatus("failed");
      expect(failed.state.visits.at(-1)?.outcome).toBe("rejected");
      expect(await answersOf(app, state.runId)).toEqual([
        expect.objectContaining({ actor: "carol", decision: "rejected", note: "too risky" }),
      ]);
    });

    it("ends the run failed on the check run's Reject button", async () => {
      writeFileSync(READY, "");
      await app.deliver("issues", labeled());
      const { state } = await app.waitForStatus("awaiting_input");
      const approval = app.github.checkRuns.find((run) => run.conclusion === "action_required");
      await app.deliver(
        "check_run",
        payloadOf<CheckRunRequestedActionEvent>("check_run", "requested_action", (p) => {
          p.check_run.external_id = String(approval?.external_id);
          p.requested_action = { identifier: "reject" };
          p.sender.login = "dave";
          p.sender.type = "User";
        }),
      );
      await app.waitForStatus("failed");
      expect(await answersOf(app, state.runId)).toEqual([
        expect.objectContaining({ actor: "dave", decision: "rejected" }),
      ]);
      expect(app.github.checkRuns.find((run) => run.id === approval?.id)).toMatchObject({
        conclusion: "failure",
      });
    });
  });

  it("waits on a deploy whose DevBox was lost until /resolve says what happened", async () => {
    app = await startTestApp(DEPLOY);
    app.github.permissions.set("alice", "write");
    app.github.permissions.set("eve", "read");
    await app.deliver("issues", labeled());
    const deploying = join(marks, "deploying");
    for (let i = 0; i < 200 && !existsSync(deploying); i++) await sleep(100);
    expect(existsSync(deploying)).toBe(true);
    // The process that ran the DevBox dies; the next one cannot know whether the deploy ran.
    await app.restart();
    const waiting = await app.waitForStatus("awaiting_input");
    expect(waiting.state.visits.at(-1)?.outcome).toBe("lost");
    const status = app.github.comments.find((c) => c.body.includes(waiting.state.runId));
    expect(status?.body).toContain("The DevBox of **deploy** was lost mid-command");
    await app.deliver("issue_comment", comment("/resolve succeeded", "eve"));
    expect(lastReply(app)).toContain("@eve needs write access");
    await app.deliver("issue_comment", comment("/resolve succeeded checked prod", "alice"));
    const done = await app.waitForStatus("succeeded");
    expect(await answersOf(app, done.state.runId)).toEqual([
      expect.objectContaining({ kind: "lost.resolved", actor: "alice", where: COMMENT_URL }),
    ]);
  });
});
