import type { IssueCommentCreatedEvent, IssuesLabeledEvent } from "@octokit/webhooks-types";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseCommand } from "../../src/github/handlers/commands.js";
import { payloadOf, startTestApp, type TestApp } from "./helpers/harness.js";

/** A loop whose gate never passes: two iterations, then it is exhausted and the run fails. */
const LOOP = `version: 1
name: fixer
on:
  label: clustercode
engines:
  noop: { command: [test, -f, "{prompt_file}"] }
nodes:
  fix:
    kind: loop
    goal: Make the tests pass.
    agent: { engine: noop }
    gates: [{ name: tests, run: "false" }]
    budget: { max_iterations: 2 }
`;

function labeled() {
  return payloadOf<IssuesLabeledEvent>("issues", "labeled", (p) => {
    if (p.label !== undefined) p.label.name = "clustercode";
    p.issue.number = 9;
    p.sender.login = "alice";
    p.sender.type = "User";
  });
}

const COMMENT_URL = "https://github.com/Codertocat/Hello-World/issues/9#issuecomment-7";

function comment(body: string) {
  return payloadOf<IssueCommentCreatedEvent>("issue_comment", "created", (p) => {
    p.issue.number = 9;
    delete p.issue.pull_request;
    p.comment.body = body;
    p.comment.html_url = COMMENT_URL;
    p.comment.user.login = "alice";
    p.sender.login = "alice";
    p.sender.type = "User";
  });
}

describe("/retry --reset-budget", () => {
  it("is read from a comment; other flags are refused with the usage", () => {
    expect(parseCommand("/retry --reset-budget")).toEqual({ kind: "retry", resetBudget: true });
    expect(parseCommand("/retry once more")).toEqual({ kind: "retry" });
    expect(parseCommand("/retry --force")).toEqual({
      kind: "invalid",
      message: "usage: `/retry [--reset-budget]`",
    });
  });

  describe("on a run whose loop was exhausted", () => {
    let app: TestApp;
    beforeEach(async () => {
      app = await startTestApp(LOOP);
      app.github.permissions.set("alice", "write");
    });
    afterEach(async () => {
      expect(app.github.problems).toEqual([]);
      expect(app.errors).toEqual([]);
      await app.close();
    });

    it("refuses /retry with why, and runs the loop again only on /retry --reset-budget, recording who asked", async () => {
      await app.deliver("issues", labeled());
      const failed = await app.waitForStatus("failed");
      const runId = failed.state.runId;
      expect(failed.state.visits.map((v) => [v.outcome, v.iterations])).toEqual([["exhausted", 2]]);

      await app.deliver("issue_comment", comment("/retry"));
      expect(app.github.comments.at(-1)?.body).toBe(
        `ClusterCode did not apply this to run \`${runId}\`: loop fix used all 2 iterations; retry with --reset-budget to give it a fresh budget.`,
      );
      const after = (await app.host.store.getRun(runId))?.snapshot as typeof failed;
      expect(after.state.visits).toHaveLength(1);

      await app.deliver("issue_comment", comment("/retry --reset-budget"));
      const again = await app.waitForStatus("failed");
      expect(again.state.visits.map((v) => [v.attempt, v.outcome, v.iterations])).toEqual([
        [1, "exhausted", 2],
        [2, "exhausted", 2],
      ]);
      const evidence = (await app.host.store.listEvidence(runId)).map(
        (e) => e.entry as { kind: string },
      );
      expect(evidence.filter((entry) => entry.kind === "budget.reset")).toEqual([
        expect.objectContaining({
          actor: "alice",
          where: COMMENT_URL,
          usedUp: ["loop fix used all 2 iterations"],
        }),
      ]);
    });
  });
});
