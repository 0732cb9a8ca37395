import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/harness.js";
import { labeledIssue } from "../helpers/payloads.js";

const WORKFLOW = `version: 1
name: ship
on:
  label: clustercode
nodes:
  build:
    kind: run
    run: echo built > out.txt
  review:
    kind: decision
    evaluator: agent
    question: Is it built?
    judge: { provider: anthropic, model: m }
edges:
  - { from: build, to: review }
  - { from: review, to: done, label: yes }
  - { from: review, to: failed, label: no }
`;

/** A judge program that keeps what it was asked and says yes. */
const JUDGE = `import { readFileSync, writeFileSync } from "node:fs";
writeFileSync(process.argv[2], readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify({ label: "yes", reasoning: "the diff builds out.txt" }));
`;

describe("an agent decision run by the app", () => {
  let app: TestApp | undefined;
  afterEach(async () => {
    await app?.close();
  });

  it("gives the judge the run branch's diff against the base branch", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cc-judge-"));
    const script = join(dir, "judge.mjs");
    const asked = join(dir, "asked.json");
    writeFileSync(script, JUDGE);
    const started = await startTestApp(WORKFLOW, {
      env: { CLUSTERCODE_JUDGE_COMMAND: JSON.stringify(["node", script, asked]) },
    });
    app = started;
    started.github.permissions.set("alice", "write");
    const labeled = labeledIssue(7, "alice", (p) => {
      p.issue.title = "Build it";
      p.issue.body = "Write out.txt";
    });
    await started.deliver("issues", labeled);
    const done = await started.waitForStatus("succeeded", 30_000);
    expect(done.state.visits.at(-1)).toMatchObject({ node: "review", outcome: "yes" });
    const request = JSON.parse(readFileSync(asked, "utf8")) as { context: { diff?: string } };
    expect(request.context.diff).toContain("out.txt");
    expect(request.context.diff).toContain("+built");
    expect(started.github.problems).toEqual([]);
    expect(started.errors).toEqual([]);
  });
});
