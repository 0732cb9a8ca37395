import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/harness.js";
import { commentOn, labeledIssue } from "../helpers/payloads.js";

/** A ten-node lifecycle of commands (a stand-in agent CLI), with no rework. */
const LIFECYCLE = `version: 1
name: lifecycle
on:
  label: clustercode
engines:
  scripted:
    command: [bash, -c, "true", "{prompt_file}"]
nodes:
  requirements: { kind: run, run: "echo req > REQUIREMENTS.md" }
  design: { kind: run, run: "echo design > DESIGN.md" }
  implement:
    kind: loop
    goal: Implement it
    agent: { engine: scripted }
    gates: [{ name: tests, run: "true" }]
    budget: { max_iterations: 3 }
  test: { kind: decision, evaluator: deterministic, run: "true" }
  triage: { kind: decision, evaluator: status }
  docs: { kind: run, run: "echo docs > CHANGELOG.md" }
  ship: { kind: approval }
  deploy: { kind: run, run: "echo deployed > deploy.txt" }
  verify: { kind: decision, evaluator: deterministic, run: "test -s deploy.txt" }
  announce: { kind: run, run: "echo done > NEWS.md" }
edges:
  - { from: requirements, to: design }
  - { from: design, to: implement }
  - { from: implement, to: test }
  - { from: test, to: triage, label: pass }
  - { from: test, to: failed, label: fail }
  - { from: triage, to: docs, label: default }
  - { from: docs, to: ship }
  - { from: ship, to: deploy, label: approved }
  - { from: ship, to: failed, label: rejected }
  - { from: deploy, to: verify }
  - { from: verify, to: announce, label: pass }
  - { from: verify, to: escalated, label: fail }
`;

describe("GitHub REST calls of a lifecycle run", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp(LIFECYCLE);
    app.github.permissions.set("alice", "write");
  });
  afterAll(async () => {
    await app.close();
  });

  // Besides the edits: reading the workflow and permissions, the status comment, the pull
  // request (a compare and an edit of its body when the run waits and when it ends, one GraphQL
  // call to leave draft, one read of whether it still merges), a check run per node, and one
  // read of the run branch's head when the approval comes (it counts only for that head).
  it("stays within 29 calls, an edit per node and one per check run, for a ten-node run without rework", async () => {
    await app.deliver("issues", labeledIssue(9));
    await app.waitForStatus("awaiting_input", 30_000);
    await app.deliver("issue_comment", commentOn(9, "/approve", "alice"));
    const done = await app.waitForStatus("succeeded", 30_000);
    expect(done.state.visits).toHaveLength(10);
    const calls = app.github.requests.filter((r) => !r.path.endsWith("/access_tokens"));
    const summary = new Map<string, number>();
    for (const call of calls) {
      const key = `${call.method} ${call.path.replace(/\/\d+/g, "/:n").replace(/[0-9a-f]{40}/g, ":sha")}`;
      summary.set(key, (summary.get(key) ?? 0) + 1);
    }
    console.info(`REST calls for a ten-node run: ${calls.length}`, Object.fromEntries(summary));
    expect(app.github.problems).toEqual([]);
    expect(app.errors).toEqual([]);
    // Edits of the status comment and the check runs fold a burst of transitions into one (a
    // debounce): how many bursts there are depends on the machine's speed, but never more than
    // one edit of the comment per node, nor of a check run after it was created.
    const commentEdits = calls.filter((c) => /\/issues\/comments\/\d+$/.test(c.path));
    const checkRunEdits = calls.filter(
      (c) => c.method === "PATCH" && /\/check-runs\//.test(c.path),
    );
    const checkRuns = calls.filter((c) => c.method === "POST" && c.path.endsWith("/check-runs"));
    expect(commentEdits.length).toBeLessThanOrEqual(done.state.visits.length);
    expect(checkRunEdits.length).toBeLessThanOrEqual(checkRuns.length);
    expect(calls.length - commentEdits.length - checkRunEdits.length).toBeLessThanOrEqual(29);
  }, 60_000);
});
