import { describe, expect, it } from "vitest";
import type { EvidenceEntry, RunDefinition } from "../../src/engine/model.js";
import { scorecard, verdictsOf } from "../../src/scorecard/scorecard.js";
import { parseWorkflow } from "../../src/workflow/parse.js";

const parsed = parseWorkflow(`version: 1
name: judged
on: { label: go }
nodes:
  fix:
    kind: loop
    goal: Fix it.
    agent: { engine: claude, model: opus }
    gates: [{ name: tests, run: npm test }]
    budget: { max_iterations: 3 }
  check:
    kind: decision
    evaluator: agent
    question: Ready?
    judge: { provider: anthropic, model: opus }
  verify:
    kind: loop
    goal: Verify it.
    agent: { engine: claude }
    gates: [{ name: e2e, run: npm run e2e }]
    budget: { max_iterations: 1 }
edges:
  - { from: fix, to: check }
  - { from: check, to: verify, label: "yes" }
  - { from: check, to: fix, label: "no", back: true, max_traversals: 2 }
  - { from: check, to: failed, label: stop }
  - { from: verify, to: done }
`);
if (!parsed.ok) throw new Error(JSON.stringify(parsed.findings));
const definition: RunDefinition = {
  runId: "r1",
  workflow: parsed.workflow,
  baseBranch: "main",
  branch: "b",
  brief: "",
  engines: {},
};

let at = 0;
function entry(kind: string, detail: Record<string, unknown> = {}): EvidenceEntry {
  return { at: ++at, kind, ...detail };
}
const work = (sha: string) => entry("command.finished", { node: "fix", sha, engine: "claude" });
const verdict = (label: string, independent = false) =>
  entry("decision.evaluated", {
    node: "check",
    evaluator: "agent",
    verdict: label,
    provider: "anthropic",
    judgeModel: "opus",
    independent,
  });

describe("judge verdicts and what overturns them", () => {
  it("a gate failing on the commit the judge passed overturns it; after a new commit it does not", () => {
    const failedOnIt = verdictsOf(definition, [
      work("aaa"),
      verdict("yes"),
      entry("loop.iteration", { node: "verify", failedGates: ["e2e"] }),
    ]);
    expect(failedOnIt[0]?.overturned?.why).toBe("a gate failed on the judged commit (verify)");
    const failedLater = verdictsOf(definition, [
      work("aaa"),
      verdict("yes"),
      entry("command.finished", { node: "verify", sha: "bbb" }),
      entry("loop.iteration", { node: "verify", failedGates: ["e2e"] }),
    ]);
    expect(failedLater[0]?.overturned).toBeUndefined();
  });

  it("a succeeded run sent back by a review, CI or a conflict overturns the verdict that passed it", () => {
    for (const source of ["review", "check", "conflict", "comment"]) {
      const verdicts = verdictsOf(definition, [
        work("aaa"),
        verdict("yes"),
        entry("run.finished", { status: "succeeded" }),
        entry("rework.started", { node: "fix", round: 1, source, actor: "bob" }),
      ]);
      expect(verdicts[0]?.overturned?.why).toBe(`sent back for rework (${source} by bob)`);
    }
    const refused = verdictsOf(definition, [
      work("aaa"),
      verdict("yes"),
      entry("rework.refused", { source: "check", reason: "no rework: section" }),
    ]);
    expect(refused[0]?.overturned).toBeUndefined();
    const stopped = verdictsOf(definition, [
      work("aaa"),
      verdict("stop"),
      entry("rework.started", { node: "fix", round: 1, source: "review" }),
    ]);
    expect(stopped[0]?.overturned).toBeUndefined();
  });

  it("a person retrying past a judge that stopped the work overturns it", () => {
    const verdicts = verdictsOf(definition, [
      work("aaa"),
      verdict("stop"),
      entry("run.finished", { status: "failed" }),
      entry("run.retried", { node: "verify", actor: "dana" }),
    ]);
    expect(verdicts[0]?.overturned?.why).toBe("retried past it by dana");
  });

  it("a judge sending work back for rework is not overturned by the rework failing its gates", () => {
    const verdicts = verdictsOf(definition, [
      work("aaa"),
      verdict("no"),
      entry("loop.iteration", { node: "fix", failedGates: ["tests"] }),
      work("bbb"),
      verdict("yes", true),
    ]);
    expect(verdicts.map((v) => [v.label, v.overturned])).toEqual([
      ["no", undefined],
      ["yes", undefined],
    ]);
  });

  it("CI failing on the judged commit overturns it", () => {
    const verdicts = verdictsOf(definition, [
      work("aaa"),
      verdict("yes"),
      entry("ci.failed", { check: "build", sha: "aaa" }),
    ]);
    expect(verdicts[0]?.overturned?.why).toBe("build failed on the judged commit");
  });

  it("a pull request closed unmerged overturns the judge that let the work go", () => {
    const verdicts = verdictsOf(definition, [
      work("aaa"),
      verdict("yes"),
      entry("pull_request.closed", { merged: false }),
    ]);
    expect(verdicts[0]?.overturned?.why).toBe("the pull request was closed unmerged");
  });

  it("counts per provider and model: verdicts, overturned, rate and independent share", () => {
    const verdicts = verdictsOf(definition, [
      work("aaa"),
      verdict("no"),
      work("bbb"),
      verdict("yes", true),
      entry("approval.answered", { node: "ship", decision: "rejected", actor: "erin" }),
    ]);
    expect(scorecard(verdicts)).toEqual([
      {
        provider: "anthropic",
        model: "opus",
        verdicts: 2,
        overturned: 1,
        overturnRate: 0.5,
        independentShare: 0.5,
      },
    ]);
  });
});
