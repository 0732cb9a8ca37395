import { execFileSync } from "node:child_process";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/harness.js";
import { labeledIssue, reviewOf } from "../helpers/payloads.js";

/**
 * Two variants race; the first to leave a WINNER file wins; a run node builds on the winner's
 * work; then a person approves.
 */
const RACE = `version: 1
name: race
on:
  label: clustercode
engines:
  scripted:
    command: [bash, -c, 'echo "$0" > WINNER', "{model}", "{prompt_file}"]
nodes:
  prototype:
    kind: prototype
    brief: Leave a WINNER file.
    variants:
      - { engine: scripted, model: one }
      - { engine: scripted, model: two }
    gates: [{ name: winner, run: test -f WINNER }]
    select: first
  after: { kind: run, run: "cat WINNER > AFTER" }
  gate: { kind: approval }
edges:
  - { from: prototype, to: after }
  - { from: after, to: gate }
  - { from: gate, to: done, label: approved }
  - { from: gate, to: failed, label: rejected }
`;

const labeled = () => labeledIssue(9);

const review = (pull: number, branch: string, commit: string) =>
  reviewOf(pull, branch, "bob", (p) => {
    p.review.commit_id = commit;
  });

describe("the run's pull request after a prototype race", () => {
  let app: TestApp;
  beforeEach(async () => {
    app = await startTestApp(RACE);
    app.github.permissions.set("alice", "write");
    app.github.permissions.set("bob", "write");
  });
  afterEach(async () => {
    await app.close();
  });

  it("shows the winner on the run branch, refuses a stale review, and leaves draft when the run succeeds", async () => {
    await app.deliver("issues", labeled());
    const { definition, state } = await app.waitForStatus("awaiting_input", 30_000);
    // The winner worked on its own branch, and its commits were moved onto the run branch:
    // the run's branch never changes, and its one pull request's head is that branch.
    expect(state.branch).toBe(definition.branch);
    expect(app.github.pulls).toHaveLength(1);
    const pull = app.github.pulls[0];
    expect(pull?.head).toBe(definition.branch);
    const head = execFileSync("git", ["rev-parse", definition.branch], { cwd: app.remote })
      .toString()
      .trim();
    expect(head).toBe(state.lastSha);
    expect(
      execFileSync("git", ["show", `${definition.branch}:WINNER`], { cwd: app.remote }).toString(),
    ).toMatch(/one|two/);
    // The node after the race checked out the run branch and pushed its checkpoint there, on
    // top of the winner's commit; the winner's variant branch stays as it was.
    const shown = (ref: string) =>
      execFileSync("git", ["show", ref], { cwd: app.remote }).toString();
    expect(shown(`${definition.branch}:AFTER`)).toBe(shown(`${definition.branch}:WINNER`));
    const parent = execFileSync("git", ["rev-parse", `${definition.branch}~1`], { cwd: app.remote })
      .toString()
      .trim();
    const variants = execFileSync(
      "git",
      [
        "for-each-ref",
        "--format=%(objectname) %(refname:short)",
        `refs/heads/${definition.branch}-*`,
      ],
      { cwd: app.remote },
    ).toString();
    expect(variants).toContain(`${parent} ${definition.branch}-v`);
    expect(variants).not.toContain(head);
    // The status comment names the run branch, never a variant's.
    await app.host.idle();
    const status = app.github.comments.find((c) => c.body.includes(state.runId));
    expect(status?.body).toContain(`Branch \`${definition.branch}\``);
    expect(status?.body).not.toContain(`${definition.branch}-v`);
    // Check runs attach to the commit the pull request shows.
    const runCheck = app.github.checkRuns.filter((run) => run.external_id === state.runId).at(-1);
    expect(runCheck?.head_sha).toBe(head);
    // The body says what the run did and changed.
    expect(pull?.body).toContain("| 1 | prototype | succeeded |");
    expect(pull?.body).toContain("`WINNER` +1 −0");
    expect(pull?.draft).toBe(true);

    // A review of an older commit approves nothing, and the reviewer is told.
    const base = execFileSync("git", ["rev-parse", "main"], { cwd: app.remote }).toString().trim();
    await app.deliver("pull_request_review", review(pull?.number ?? 0, definition.branch, base));
    expect((await app.host.store.getRun(state.runId))?.status).toBe("awaiting_input");
    expect(app.github.comments.map((c) => c.body).join("\n")).toContain("this review is stale");

    await app.deliver("pull_request_review", review(pull?.number ?? 0, definition.branch, head));
    const done = await app.waitForStatus("succeeded");
    expect(done.state.status).toBe("succeeded");
    expect(pull?.draft).toBe(false);
    expect(pull?.body).toContain("**succeeded**");
    expect(app.github.problems).toEqual([]);
    expect(app.errors).toEqual([]);
  }, 60_000);

  it("shows the run succeeded when its pull request cannot leave draft", async () => {
    // The installation may not mark it ready (a permission it lacks): GitHub refuses.
    app.github.faultOf = (method, path) =>
      method === "POST" && path === "/graphql" ? { status: 403, message: "Forbidden" } : undefined;
    await app.deliver("issues", labeled());
    const { definition, state } = await app.waitForStatus("awaiting_input", 30_000);
    const pull = app.github.pulls[0];
    const head = execFileSync("git", ["rev-parse", definition.branch], { cwd: app.remote })
      .toString()
      .trim();
    await app.deliver("pull_request_review", review(pull?.number ?? 0, definition.branch, head));
    await app.waitForStatus("succeeded");
    await app.host.idle();
    const status = app.github.comments.find((c) => c.body.includes(state.runId));
    expect(status?.body).toMatch(/\bsucceeded\b/);
    expect(status?.body).not.toMatch(/awaiting input/i);
    expect(pull?.draft).toBe(true);
    expect(app.errors.join("\n")).toMatch(/ready for review/);
  }, 60_000);

  it("still shows the run waiting when GitHub cannot compare its branch for the body's diffstat", async () => {
    // Every compare fails (an outage, or a diff too large for GitHub to compare).
    app.github.faultOf = (method, path) =>
      method === "GET" && path.includes("/compare/") ? { status: 502 } : undefined;
    await app.deliver("issues", labeled());
    const { state } = await app.waitForStatus("awaiting_input", 30_000);
    await app.host.idle();
    const status = app.github.comments.find((c) => c.body.includes(state.runId));
    expect(status?.body).toMatch(/awaiting input/i);
    const pull = app.github.pulls[0];
    expect(pull?.body).toContain("| 1 | prototype | succeeded |");
    expect(pull?.body).not.toContain("`WINNER` +1");
    expect(app.errors.join("\n")).toMatch(/compare/);
  }, 60_000);
});
