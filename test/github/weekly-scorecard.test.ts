import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isoWeek, SCORECARD_TITLE } from "../../src/github/surfaces/weekly-scorecard.js";
import { startTestApp, type TestApp } from "./helpers/harness.js";
import { commentOn, labeledIssue, OWNER, REPO } from "../helpers/payloads.js";

const WORKFLOW = `version: 1
name: judged
on: { label: clustercode }
nodes:
  write:
    kind: run
    run: echo work > WORK.md
  check:
    kind: decision
    evaluator: agent
    question: Is WORK.md ready to ship?
    judge: { provider: openai, model: gpt-judge }
  ship:
    kind: approval
edges:
  - { from: write, to: check }
  - { from: check, to: ship, label: "yes" }
  - { from: check, to: failed, label: "no" }
  - { from: ship, to: done, label: approved }
  - { from: ship, to: failed, label: rejected }
`;

describe("the weekly judge scorecard comment (opt-in)", () => {
  let app: TestApp;
  afterEach(async () => {
    expect(app.github.problems).toEqual([]);
    await app.close();
  });

  it("posts the week's figures once on the app's tracking issue, the rejected verdict overturned", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cc-judge-"));
    writeFileSync(
      join(dir, "judge.mjs"),
      `process.stdin.resume();\nprocess.stdin.on("end", () => console.log(JSON.stringify({ label: "yes", reasoning: "ok", model: "house-judge" })));\n`,
    );
    app = await startTestApp(WORKFLOW, {
      env: {
        CLUSTERCODE_SCORECARD_REPOS: `${OWNER}/${REPO}`,
        CLUSTERCODE_JUDGE_COMMAND: JSON.stringify(["node", join(dir, "judge.mjs")]),
      },
    });
    app.github.permissions.set("alice", "write");
    await app.deliver("issues", labeledIssue(7));
    await app.waitForStatus("awaiting_input");
    await app.deliver("issue_comment", commentOn(7, "/reject not ready", "alice"));
    await app.waitForStatus("failed");

    expect(await app.host.weekly?.tick()).toEqual([`${OWNER}/${REPO}`]);
    const tracking = app.github.issues.find((issue) => issue.title === SCORECARD_TITLE);
    expect(tracking).toBeDefined();
    const posted = app.github.comments.filter((c) => c.issue === tracking?.number);
    expect(posted).toHaveLength(1);
    expect(posted[0]?.body).toContain(`Judge scorecard, week ${isoWeek(Date.now())}`);
    expect(posted[0]?.body).toContain("| command | `house-judge` | 1 | 1 | 100 % | 100 % |");
    expect(posted[0]?.body).toContain("said **yes**; rejected at ship by alice");
    // Once a week: the next tick posts nothing more.
    expect(await app.host.weekly?.tick()).toEqual([]);
    expect(app.github.comments.filter((c) => c.issue === tracking?.number)).toHaveLength(1);
  }, 60_000);
});
