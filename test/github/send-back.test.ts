import type {
  CheckSuiteCompletedEvent,
  IssueCommentCreatedEvent,
  IssuesLabeledEvent,
  PullRequestReviewCommentCreatedEvent,
  PullRequestReviewSubmittedEvent,
  PullRequestSynchronizeEvent,
} from "@octokit/webhooks-types";
import { execFileSync } from "node:child_process";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LOG_TAIL_BYTES } from "../../src/github/handlers/check-feedback.js";
import { wantsDelivery } from "../../src/github/intake/router.js";
import type { RunDocument } from "../../src/runtime/runtime.js";
import { RunRepository } from "../../src/store/run-repository.js";
import { payloadOf, startTestApp, type TestApp } from "./helpers/harness.js";

/** A build that keeps what it was told (feedback.md), an approval that sends it back. */
const REWORKED = `version: 1
name: ship
on:
  label: clustercode
rework: { node: build, max_rounds: 1 }
nodes:
  build:
    kind: run
    run: 'if [ -n "$CLUSTERCODE_FEEDBACK_FILE" ]; then cp "$CLUSTERCODE_FEEDBACK_FILE" feedback.md; fi; date +%s%N > built.txt'
  gate:
    kind: approval
edges:
  - { from: build, to: gate }
  - { from: gate, to: done, label: approved }
  - { from: gate, to: build, label: rejected, back: true, max_traversals: 3 }
`;

const ISSUE = 9;
const REVIEW_ID = 237895671;

function labeled(): IssuesLabeledEvent {
  return payloadOf<IssuesLabeledEvent>("issues", "labeled", (p) => {
    if (p.label !== undefined) p.label.name = "clustercode";
    p.issue.number = ISSUE;
    p.sender.login = "alice";
    p.sender.type = "User";
  });
}

function commentOn(number: number, body: string, pull: boolean): IssueCommentCreatedEvent {
  return payloadOf<IssueCommentCreatedEvent>("issue_comment", "created", (p) => {
    p.issue.number = number;
    if (pull) {
      const url = `https://api.github.com/repos/Codertocat/Hello-World/pulls/${number}`;
      p.issue.pull_request = { url, html_url: url, diff_url: url, patch_url: url };
    } else delete p.issue.pull_request;
    p.comment.body = body;
    p.comment.user.login = "bob";
    p.sender.login = "bob";
    p.sender.type = "User";
  });
}

function changesRequested(
  pull: number,
  branch: string,
  commit: string,
): PullRequestReviewSubmittedEvent {
  return payloadOf<PullRequestReviewSubmittedEvent>("pull_request_review", "submitted", (p) => {
    p.pull_request.number = pull;
    p.pull_request.head.ref = branch;
    p.review.id = REVIEW_ID;
    p.review.state = "changes_requested";
    p.review.body = "Please name the constant.";
    p.review.commit_id = commit;
    p.review.user.login = "bob";
    p.sender.login = "bob";
    p.sender.type = "User";
  });
}

function suiteFailed(branch: string, sha: string): CheckSuiteCompletedEvent {
  return payloadOf<CheckSuiteCompletedEvent>("check_suite", "completed", (p) => {
    p.check_suite.id = 5001;
    p.check_suite.head_branch = branch;
    p.check_suite.head_sha = sha;
    p.check_suite.conclusion = "failure";
    if (p.check_suite.app !== null) p.check_suite.app.slug = "github-actions";
    p.check_suite.pull_requests = [];
  });
}

describe("reviews and CI send a run back", () => {
  let app: TestApp;
  beforeEach(async () => {
    app = await startTestApp(REWORKED);
    app.github.permissions.set("alice", "write");
    app.github.permissions.set("bob", "write");
  });
  afterEach(async () => {
    await app.close();
  });

  /** The run's document once `test` holds of it. */
  async function until(test: (doc: RunDocument) => boolean): Promise<RunDocument> {
    for (let tries = 0; tries < 300; tries++) {
      const runs = new RunRepository(app.host.store);
      const [run] = await runs.list("Codertocat/Hello-World");
      if (run !== undefined) {
        if (test(run.document)) {
          await app.host.idle();
          return ((await runs.get(run.stored.runId)) ?? run).document;
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`the run never got there; errors: ${app.errors.join("; ")}`);
  }

  function show(ref: string, path: string): string {
    return execFileSync("git", ["show", `${ref}:${path}`], { cwd: app.remote }).toString();
  }

  function replies(): string {
    return app.github.comments.map((c) => c.body).join("\n---\n");
  }

  it("a review requesting changes rejects the waiting approval, and its line comments reach the node", async () => {
    await app.deliver("issues", labeled());
    const { definition, state } = await app.waitForStatus("awaiting_input");
    const pull = app.github.pulls[0]?.number ?? 0;
    app.github.reviewComments.set(REVIEW_ID, [
      { id: 1, path: "src/app.ts", line: 12, body: "Use MAX_RETRIES here." },
    ]);
    await app.deliver(
      "pull_request_review",
      changesRequested(pull, definition.branch, state.lastSha ?? ""),
    );
    const again = await until(
      (doc) => doc.state.status === "awaiting_input" && doc.state.visits.length === 4,
    );
    expect(again.state.visits.map((v) => v.node)).toEqual(["build", "gate", "build", "gate"]);
    const told = show(definition.branch, "feedback.md");
    expect(told).toContain("Please name the constant.");
    expect(told).toContain("src/app.ts:12: Use MAX_RETRIES here.");
    expect(app.github.problems).toEqual([]);
  }, 60_000);

  it("a review after success re-opens the run, and /rework past the cap is refused with why", async () => {
    await app.deliver("issues", labeled());
    await app.waitForStatus("awaiting_input");
    await app.deliver("issue_comment", commentOn(ISSUE, "/approve", false));
    const { definition, state } = await app.waitForStatus("succeeded");
    const pull = app.github.pulls[0]?.number ?? 0;
    await app.deliver(
      "pull_request_review",
      changesRequested(pull, definition.branch, state.lastSha ?? ""),
    );
    const reopened = await until(
      (doc) => doc.state.status === "awaiting_input" && doc.state.visits.length === 4,
    );
    expect(reopened.state.visits[2]?.node).toBe("build");
    expect(show(definition.branch, "feedback.md")).toContain("Please name the constant.");
    await app.deliver("issue_comment", commentOn(ISSUE, "/approve", false));
    await until((doc) => doc.state.status === "succeeded");
    // One round allowed: a second send-back is refused, and the person is told why.
    await app.deliver("issue_comment", commentOn(pull, "/rework tighten the error text", true));
    expect((await app.host.store.getRun(state.runId))?.status).toBe("succeeded");
    expect(replies()).toContain("did not send run");
    expect(replies()).toContain("rework.max_rounds");
    expect(app.github.problems).toEqual([]);
  }, 60_000);

  it("/rework sends a succeeded run back with the text as feedback", async () => {
    await app.deliver("issues", labeled());
    await app.waitForStatus("awaiting_input");
    await app.deliver("issue_comment", commentOn(ISSUE, "/approve", false));
    const { definition } = await app.waitForStatus("succeeded");
    const pull = app.github.pulls[0]?.number ?? 0;
    await app.deliver("issue_comment", commentOn(pull, "/rework tighten the error text", true));
    await until((doc) => doc.state.status === "awaiting_input" && doc.state.visits.length === 4);
    expect(show(definition.branch, "feedback.md")).toContain("tighten the error text");
  }, 60_000);

  it("CI failing on the head sends a succeeded run back once per commit, with the failing checks and the job's log tail", async () => {
    await app.deliver("issues", labeled());
    await app.waitForStatus("awaiting_input");
    await app.deliver("issue_comment", commentOn(ISSUE, "/approve", false));
    const { definition, state } = await app.waitForStatus("succeeded");
    const sha = state.lastSha ?? "";
    app.github.suiteRuns.set(5001, [
      {
        id: 7001,
        name: "test (ubuntu)",
        conclusion: "failure",
        html_url: "https://github.com/Codertocat/Hello-World/actions/runs/1/job/7001",
        output: { title: "2 tests failed", summary: "parser.test.ts", annotations_count: 1 },
      },
      { id: 7002, name: "lint", conclusion: "success", html_url: null, output: {} },
    ]);
    app.github.annotations.set(7001, [
      {
        path: "src/parser.ts",
        start_line: 40,
        annotation_level: "failure",
        title: "expected 3",
        message: "received 4",
      },
    ]);
    app.github.jobLogs.set(7001, `${"x".repeat(20_000)}\nFAIL parser.test.ts > splits lines\n`);
    // GitHub may deliver the same event twice (two ids), to two replicas.
    await Promise.all([
      app.deliver("check_suite", suiteFailed(definition.branch, sha)),
      app.deliver("check_suite", suiteFailed(definition.branch, sha)),
    ]);
    const reopened = await until(
      (doc) => doc.state.status === "awaiting_input" && doc.state.visits.length === 4,
    );
    const told = show(definition.branch, "feedback.md");
    expect(told).toContain("test (ubuntu)");
    expect(told).toContain("2 tests failed");
    expect(told).toContain("src/parser.ts:40 failure: expected 3: received 4");
    expect(told).toContain("FAIL parser.test.ts > splits lines");
    expect(told).not.toContain("x".repeat(LOG_TAIL_BYTES + 1));
    const started = (await app.host.store.listEvidence(reopened.state.runId)).filter(
      (e) => (e.entry as { kind: string }).kind === "rework.started",
    );
    expect(started).toHaveLength(1);
    expect(app.github.calls("GET", /\/check-suites\/5001\/check-runs$/)).toHaveLength(1);
    expect(app.github.problems).toEqual([]);
  }, 60_000);

  it("a run that succeeds on a branch that conflicts with its base goes back, told so", async () => {
    await app.deliver("issues", labeled());
    const { definition } = await app.waitForStatus("awaiting_input");
    const pull = app.github.pulls[0];
    if (pull !== undefined) pull.mergeable = false;
    await app.deliver("issue_comment", commentOn(ISSUE, "/approve", false));
    await until((doc) => doc.state.status === "awaiting_input" && doc.state.visits.length === 4);
    expect(show(definition.branch, "feedback.md")).toContain("no longer merges with its base");
  }, 60_000);

  it("a succeeded run's pull request that stops merging with its base on synchronize goes back once", async () => {
    await app.deliver("issues", labeled());
    await app.waitForStatus("awaiting_input");
    await app.deliver("issue_comment", commentOn(ISSUE, "/approve", false));
    const { definition, state } = await app.waitForStatus("succeeded");
    const pull = app.github.pulls[0];
    if (pull !== undefined) pull.mergeable = false;
    const synchronized = payloadOf<PullRequestSynchronizeEvent>(
      "pull_request",
      "synchronize",
      (p) => {
        p.number = pull?.number ?? 0;
        p.pull_request.head.ref = definition.branch;
        p.pull_request.head.sha = state.lastSha ?? "";
        p.pull_request.head.repo = p.pull_request.base.repo;
      },
    );
    await app.deliver("pull_request", synchronized);
    await app.deliver("pull_request", synchronized);
    await until((doc) => doc.state.status === "awaiting_input" && doc.state.visits.length === 4);
    expect(show(definition.branch, "feedback.md")).toContain("no longer merges with its base");
    const started = (await app.host.store.listEvidence(state.runId)).filter(
      (e) => (e.entry as { kind: string }).kind === "rework.started",
    );
    expect(started).toHaveLength(1);
  }, 60_000);

  it("ignores ClusterCode's own check suites and acknowledges a lone review comment without acting", async () => {
    await app.deliver("issues", labeled());
    await app.waitForStatus("awaiting_input");
    await app.deliver("issue_comment", commentOn(ISSUE, "/approve", false));
    const { definition, state } = await app.waitForStatus("succeeded");
    const own = suiteFailed(definition.branch, state.lastSha ?? "");
    if (own.check_suite.app !== null) own.check_suite.app.slug = "clustercode";
    await app.deliver("check_suite", own);
    const comment = payloadOf<PullRequestReviewCommentCreatedEvent>(
      "pull_request_review_comment",
      "created",
      (p) => {
        p.pull_request.head.ref = definition.branch;
        p.sender.type = "User";
      },
    );
    expect(wantsDelivery("pull_request_review_comment", comment)).toBe(false);
    await app.deliver("pull_request_review_comment", comment);
    expect((await app.host.store.getRun(state.runId))?.status).toBe("succeeded");
    expect(app.github.calls("GET", /\/check-suites\//)).toHaveLength(0);
  }, 60_000);
});
