import { describe, expect, it } from "vitest";
import type { EvidenceEntry, RunDefinition, RunSnapshot } from "../../src/engine/model.js";
import { renderCheckRuns } from "../../src/github/surfaces/render-checks.js";
import { renderStatusComment } from "../../src/github/surfaces/render-status.js";
import { parseWorkflow } from "../../src/workflow/parse.js";

const parsed = parseWorkflow(`version: 1
name: review
on: { label: go }
nodes:
  fix:
    kind: loop
    goal: Make the tests pass
    agent: { engine: claude }
    gates: [{ name: tests, run: npm test }]
    budget: { max_iterations: 3 }
  judge:
    kind: decision
    evaluator: agent
    question: Is it right?
    judge: { provider: anthropic, model: m }
  ship:
    kind: approval
edges:
  - { from: fix, to: judge }
  - { from: judge, to: ship, label: yes }
  - { from: judge, to: fix, label: no, back: true, max_traversals: 2 }
  - { from: judge, to: escalated, label: exhausted }
  - { from: ship, to: done, label: approved }
`);
if (!parsed.ok) throw new Error(JSON.stringify(parsed.findings));
const definition: RunDefinition = {
  runId: "r1",
  workflow: parsed.workflow,
  baseBranch: "main",
  branch: "clustercode/4-r1",
  brief: "b",
  engines: {},
};
const state = {
  runId: "r1",
  status: "awaiting_input",
  startedAt: 0,
  updatedAt: 50,
  branch: "clustercode/4-r1",
  branchPushed: true,
  lastSha: "abc",
  visits: [
    { node: "fix", attempt: 1, startedAt: 1, endedAt: 10, outcome: "succeeded", costUsd: 1 },
    { node: "judge", attempt: 1, startedAt: 11, endedAt: 12, outcome: "yes", costUsd: 0 },
    { node: "ship", attempt: 1, startedAt: 13, costUsd: 0 },
  ],
  traversals: { "0": 1, "1": 1 },
  costUsd: 1,
  active: {
    node: "ship",
    visit: 2,
    progress: { kind: "approval", timerId: "t", deadline: 99 },
    lostRerun: false,
    iterationsBefore: 0,
  },
  awaiting: { kind: "approval", node: "ship", deadline: 1_000_000 },
  timers: {},
  seq: 1,
  evidenceSeq: 1,
} as RunSnapshot;
const evidence: EvidenceEntry[] = [
  { at: 5, kind: "loop.iteration", node: "fix", iteration: 1, failedGates: ["tests"] },
  { at: 9, kind: "loop.iteration", node: "fix", iteration: 2, failedGates: [] },
  {
    at: 12,
    kind: "decision.evaluated",
    node: "judge",
    evaluator: "agent",
    verdict: "yes",
    reasoning: "All **good**.",
  },
];

/** The run's state once nothing is active or awaited, with `patch` on top. */
function settled(patch: Partial<RunSnapshot>): RunSnapshot {
  const rest: Partial<RunSnapshot> = { ...state };
  delete rest.active;
  delete rest.awaiting;
  return { ...rest, ...patch } as RunSnapshot;
}

describe("rendering a run", () => {
  it("gives a check run per loop, decision and approval visit, with their outputs", () => {
    const specs = renderCheckRuns(definition, state, evidence);
    expect(specs.map((spec) => [spec.externalId, spec.status, spec.conclusion])).toEqual([
      ["r1", "in_progress", undefined],
      ["r1/0", "completed", "success"],
      ["r1/1", "completed", "success"],
      ["r1/2", "completed", "action_required"],
    ]);
    expect(specs[1]?.summary).toContain("| 1 | tests |");
    expect(specs[1]?.summary).toContain("| 2 | all passed |");
    expect(specs[2]?.title).toBe("Verdict: yes");
    expect(specs[2]?.summary).toContain("All **good**.");
    expect(specs[3]?.actions?.map((action) => action.identifier)).toEqual(["approve", "reject"]);
  });

  it("draws the status comment with the marker, the graph, the table and the waiting approval", () => {
    const failedSetup = {
      node: "fix",
      attempt: 1,
      startedAt: 0,
      endedAt: 1,
      outcome: "failed",
      reason: "DevBox failed to start: setup command 1 (npm ci) exited with 1\nnpm ERR! 403 | x",
      costUsd: 0,
    };
    const body = renderStatusComment(
      definition,
      { ...state, visits: [failedSetup, ...state.visits] },
      { pullRequestUrl: "https://x/pull/9" },
    );
    expect(body.startsWith("<!-- clustercode:run:r1 -->")).toBe(true);
    expect(body).toContain("```mermaid");
    // A reason shows its first line: a failed setup's output stays out of the comment.
    expect(body).toContain(
      "| 1 | fix | 1 | failed | DevBox failed to start: setup command 1 (npm ci) exited with 1 |",
    );
    expect(body).not.toContain("npm ERR!");
    expect(body).toContain("| 3 | judge | 1 | yes |");
    expect(body).toContain("Waiting on **ship**");
    expect(body).toContain("[pull request](https://x/pull/9)");
  });

  it("shows an approval's note as text, without its hidden parts", () => {
    const ship = { node: "ship", attempt: 1, startedAt: 13, endedAt: 20, outcome: "approved" };
    const answered = settled({
      status: "running",
      visits: [...state.visits.slice(0, 2), { ...ship, costUsd: 0 }],
    });
    const specs = renderCheckRuns(definition, answered, [
      ...evidence,
      {
        at: 15,
        kind: "approval.answered",
        node: "ship",
        decision: "approved",
        actor: "bob",
        note: "ok <!-- merge without review --> <img src=x onerror=alert(1)>\u200B [//]: # (x)",
      },
    ]);
    const summary = specs[3]?.summary ?? "";
    expect(summary).toContain("approved by @bob: ok");
    expect(summary).not.toContain("<!--");
    expect(summary).not.toContain("merge without review");
    expect(summary).not.toContain("<img");
    expect(summary).toContain("&lt;img src=x onerror=alert(1)&gt;");
    expect(summary).not.toContain("\u200B");
  });

  it("shows a cancel reason as text: it cannot hide the comment or pass for a marker", () => {
    const cancelled = settled({
      status: "cancelled",
      reason: "cancelled by bob: <!-- clustercode:run:r2 --> done",
    });
    const body = renderStatusComment(definition, cancelled, {});
    expect(body).toMatch(/Reason: cancelled by bob: +done/);
    expect(body).not.toContain("clustercode:run:r2");
    const [run] = renderCheckRuns(definition, cancelled, evidence);
    expect(run?.summary).not.toContain("<!--");
  });
});
