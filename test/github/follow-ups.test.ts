import type { CheckRunCompletedEvent, PullRequestClosedEvent } from "@octokit/webhooks-types";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SHIP_WORKFLOW, startTestApp, type TestApp } from "./helpers/harness.js";
import { labeledIssue, OWNER, payloadOf, REPO } from "../helpers/payloads.js";

/** What happened to a run's work on GitHub after the fact is recorded on the run. */
describe("a run's pull request and CI, after the fact", () => {
  let app: TestApp;
  let runId: string;
  let branch: string;
  beforeEach(async () => {
    app = await startTestApp(SHIP_WORKFLOW);
    app.github.permissions.set("alice", "write");
    await app.deliver("issues", labeledIssue(7));
    const waiting = await app.waitForStatus("awaiting_input");
    runId = waiting.state.runId;
    branch = waiting.definition.branch;
  });
  afterEach(async () => {
    expect(app.github.problems).toEqual([]);
    expect(app.errors).toEqual([]);
    await app.close();
  });

  const kinds = async () =>
    (await app.host.store.listEvidence(runId)).map((e) => e.entry as { kind: string });

  function closed(fork: boolean) {
    return payloadOf<PullRequestClosedEvent>("pull_request", "closed", (p) => {
      p.pull_request.head.ref = branch;
      p.pull_request.merged = false;
      p.pull_request.base.repo.full_name = `${OWNER}/${REPO}`;
      if (p.pull_request.head.repo !== null)
        p.pull_request.head.repo.full_name = fork ? `mallory/${REPO}` : `${OWNER}/${REPO}`;
    });
  }

  it("records the run's pull request closed unmerged, and not a fork's with its branch name", async () => {
    await app.deliver("pull_request", closed(true));
    await app.host.idle();
    expect((await kinds()).map((e) => e.kind)).not.toContain("pull_request.closed");
    await app.deliver("pull_request", closed(false));
    await app.host.idle();
    expect(await kinds()).toContainEqual(
      expect.objectContaining({ kind: "pull_request.closed", merged: false }),
    );
    // The run itself does not move: it still waits at its approval.
    expect((await app.host.store.getRun(runId))?.status).toBe("awaiting_input");
  });

  it("records another check failing on the run's branch, and not ClusterCode's own", async () => {
    const check = (name: string) =>
      payloadOf<CheckRunCompletedEvent>("check_run", "completed", (p) => {
        p.check_run.name = name;
        p.check_run.conclusion = "failure";
        p.check_run.head_sha = "0123456789abcdef0123456789abcdef01234567";
        p.check_run.check_suite.head_branch = branch;
      });
    await app.deliver("check_run", check("ClusterCode · ship"));
    await app.deliver("check_run", check("build"));
    await app.host.idle();
    const failed = (await kinds()).filter((e) => e.kind === "ci.failed");
    expect(failed).toEqual([
      expect.objectContaining({ check: "build", sha: "0123456789abcdef0123456789abcdef01234567" }),
    ]);
  });
});
