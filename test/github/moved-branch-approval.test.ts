/**
 * An approval counts only for the run branch's head on GitHub as it is when the approval comes:
 * a writer's push after the run's checkpoint (`pull_request.synchronize`) is code nobody
 * reviewed, so a review of the previous head, or a `/approve`, approves nothing until the branch
 * shows the run's checkpoint again.
 */
import type { PullRequestSynchronizeEvent } from "@octokit/webhooks-types";
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SHIP_WORKFLOW, startTestApp, type TestApp } from "./helpers/harness.js";
import { commentOn, labeledIssue, payloadOf, reviewOf } from "../helpers/payloads.js";

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, { cwd, encoding: "utf8", stdio: "pipe" }).trim();

describe("an approval of a run whose branch a writer moved", () => {
  let app: TestApp;
  beforeEach(async () => {
    app = await startTestApp(SHIP_WORKFLOW);
    app.github.permissions.set("alice", "write");
    app.github.permissions.set("bob", "write");
    app.github.permissions.set("mallory", "write");
  });
  afterEach(async () => {
    await app.close();
  });

  /** `mallory` pushes a commit onto the run branch; the new head. */
  function writerPushes(branch: string): string {
    const work = join(mkdtempSync(join(tmpdir(), "cc-moved-")), "work");
    git(tmpdir(), "clone", "--quiet", "--branch", branch, app.remote, work);
    writeFileSync(join(work, "out.txt"), "not what was reviewed\n");
    git(work, "-c", "user.name=M", "-c", "user.email=m@example.com", "commit", "-qam", "sneak");
    git(work, "push", "--quiet", "origin", `HEAD:refs/heads/${branch}`);
    return git(app.remote, "rev-parse", `refs/heads/${branch}`);
  }

  const comments = () => app.github.comments.map((c) => c.body).join("\n---\n");

  it("refuses a review of the previous head after a synchronize, saying why; approves once the branch shows the checkpoint again", async () => {
    await app.deliver("issues", labeledIssue(11));
    const { definition, state } = await app.waitForStatus("awaiting_input", 30_000);
    const checkpoint = state.lastSha ?? "";
    expect(git(app.remote, "rev-parse", `refs/heads/${definition.branch}`)).toBe(checkpoint);
    const pull = app.github.pulls[0]?.number ?? 0;

    const moved = writerPushes(definition.branch);
    expect(moved).not.toBe(checkpoint);
    await app.deliver(
      "pull_request",
      payloadOf<PullRequestSynchronizeEvent>("pull_request", "synchronize", (p) => {
        p.number = pull;
        p.pull_request.head.ref = definition.branch;
        p.pull_request.head.sha = moved;
        p.pull_request.head.repo = p.pull_request.base.repo;
        p.sender.login = "mallory";
      }),
    );
    // The pull request is told the branch moved and that pending approvals no longer count.
    expect(comments()).toContain("Pending approvals no longer count");
    expect(comments()).toContain(`moved to ${moved.slice(0, 12)}`);
    const evidence = await app.host.store.listEvidence(state.runId);
    expect(evidence.map((e) => (e.entry as { kind: string }).kind)).toContain("branch.moved");

    // bob's review saw the run's checkpoint, the previous head: it approves nothing.
    await app.deliver(
      "pull_request_review",
      reviewOf(pull, definition.branch, "bob", (p) => {
        p.review.commit_id = checkpoint;
      }),
    );
    // Nor does a `/approve`: it is checked against the branch's head on GitHub too.
    await app.deliver("issue_comment", commentOn(pull, "/approve", "alice", { pull: true }));
    await app.host.idle();
    expect((await app.host.store.getRun(state.runId))?.status).toBe("awaiting_input");
    const refusals = app.github.comments.filter(
      (c) => c.body.startsWith("@") && c.body.includes("Nothing was approved"),
    );
    expect(refusals.map((c) => c.body.slice(0, 6))).toEqual(["@bob r", "@alice"]);
    expect(refusals[0]?.body).toContain(
      `branch moved to ${moved.slice(0, 12)}, off the run's last checkpoint (${checkpoint.slice(0, 12)})`,
    );

    // The writer's push is undone: the branch shows the checkpoint, and the review approves it.
    git(app.remote, "update-ref", `refs/heads/${definition.branch}`, checkpoint);
    await app.deliver(
      "pull_request_review",
      reviewOf(pull, definition.branch, "bob", (p) => {
        p.review.commit_id = checkpoint;
      }),
    );
    const done = await app.waitForStatus("succeeded");
    expect(done.state.lastSha).toBe(checkpoint);
    expect(app.errors).toEqual([]);
  }, 60_000);
});
