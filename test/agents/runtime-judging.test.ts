import "./promise-with-resolvers.js";
import { execFileSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import nock from "nock";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { GitDiffSource } from "../../src/agents/diff-source.js";
import type { EvidenceEntry } from "../../src/engine/model.js";
import { judgeFromSettings } from "../../src/runtime/judge.js";
import { decodeSettings } from "../../src/settings/index.js";
import { definitionOf, workflowOf } from "../engine/harness.js";
import { useTestDynamo } from "../store/dynalite-fixture.js";
import { InstantWorld } from "../helpers/instant-world.js";
import { TEST_ENV } from "./judge-fixtures.js";

const dynamo = useTestDynamo();
let repo: string;

/** The branches the two variants would have pushed, with different changes. */
beforeAll(async () => {
  repo = await mkdtemp(join(tmpdir(), "clustercode-judging-"));
  const git = (...args: string[]) =>
    execFileSync("git", ["-C", repo, "-c", "user.name=t", "-c", "user.email=t@t", ...args]);
  git("init", "--quiet", "--initial-branch=main");
  await writeFile(join(repo, "page.ts"), "return items.slice(0, n - 1)\n");
  git("add", ".");
  git("commit", "--quiet", "-m", "base");
  for (const [variant, line] of [
    ["v1", "return items.slice(0, n - 1) // TODO\n"],
    ["v2", "return items.slice(0, n)\n"],
  ] as const) {
    git("checkout", "--quiet", "-b", `clustercode/1-r1-${variant}`, "main");
    await writeFile(join(repo, "page.ts"), line);
    git("commit", "--quiet", "-am", variant);
  }
  git("checkout", "--quiet", "main");
  nock.disableNetConnect();
  nock.enableNetConnect(/127\.0\.0\.1|localhost/);
});
afterAll(async () => {
  nock.enableNetConnect();
  await rm(repo, { recursive: true, force: true });
});
afterEach(() => {
  const pending = nock.pendingMocks();
  nock.cleanAll();
  expect(pending).toEqual([]);
});

const race = workflowOf(`version: 1
name: race
on: { label: go }
nodes:
  prototype:
    kind: prototype
    brief: Fix the pagination bug.
    variants:
      - { engine: claude, model: claude-sonnet-4-5 }
      - { engine: codex, model: gpt-5-codex }
    gates: [{ name: tests, run: npm test }]
    select: judge
    judge: { provider: anthropic, model: claude-opus-4-1 }
`);

const review = workflowOf(`version: 1
name: review
on: { label: go }
nodes:
  build: { kind: run, run: make }
  review:
    kind: decision
    evaluator: agent
    question: Does the change satisfy the requirement?
    judge: { provider: openai, model: gpt-5 }
edges:
  - { from: build, to: review }
  - { from: review, to: done, label: approved }
  - { from: review, to: escalated, label: needs-changes }
`);

const withDefault = workflowOf(`version: 1
name: review
on: { label: go }
nodes:
  build: { kind: run, run: make }
  review:
    kind: decision
    evaluator: agent
    question: Does the change satisfy the requirement?
    judge: { provider: openai, model: gpt-5 }
edges:
  - { from: build, to: review }
  - { from: review, to: done, label: approved }
  - { from: review, to: failed, label: needs-changes }
  - { from: review, to: escalated, label: default }
`);

async function world() {
  const store = await dynamo.newStore();
  const judge = judgeFromSettings(decodeSettings(TEST_ENV).providers, { maxRetries: 0 });
  return {
    store,
    world: new InstantWorld({ store, judge, repository: repo, diffs: new GitDiffSource() }),
  };
}

const chat = (args: unknown) => ({
  id: "chatcmpl-1",
  object: "chat.completion",
  created: 1,
  model: "gpt-5-2025-08-07",
  choices: [
    {
      index: 0,
      finish_reason: "tool_calls",
      message: {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: "c",
            type: "function",
            function: { name: "record_verdict", arguments: JSON.stringify(args) },
          },
        ],
      },
    },
  ],
  usage: { prompt_tokens: 1000, completion_tokens: 50, total_tokens: 1050 },
});

const kinds = async (
  store: Awaited<ReturnType<typeof world>>["store"],
  runId: string,
  kind: string,
) =>
  (await store.listEvidence(runId))
    .map((r) => r.entry as EvidenceEntry)
    .filter((e) => e.kind === kind);

describe("judging through the runtime (store on dynalite, providers on nock)", () => {
  it("a prototype judged by Anthropic: the pick becomes the run branch, reasoning and table kept", async () => {
    let body = "";
    const scope = nock(TEST_ENV.ANTHROPIC_BASE_URL)
      .post("/v1/messages", (b: Record<string, unknown>) => ((body = JSON.stringify(b)), true))
      .reply(200, {
        id: "msg_1",
        type: "message",
        role: "assistant",
        model: "claude-opus-4-1-20250805",
        stop_reason: "tool_use",
        stop_sequence: null,
        content: [
          {
            type: "tool_use",
            id: "toolu_1",
            name: "record_verdict",
            input: { label: "v2", reasoning: "v2 fixes the slice; v1 only adds a TODO." },
          },
        ],
        usage: { input_tokens: 3000, output_tokens: 100 },
      });
    const { store, world: w } = await world();
    await w.runtime.start(definitionOf(race, { runId: "r1" }), { repo });
    const done = await w.settled("r1");
    scope.done();
    expect(w.errors).toEqual([]);
    // The judge read both variants' real diffs and the requirement.
    expect(body).toContain("Fix the pagination bug.");
    expect(body).toContain("+return items.slice(0, n)");
    expect(body).toContain("// TODO");
    expect(body).toContain('"enum":["v1","v2"]');
    // The pick is moved onto the run branch, whose name never changes.
    expect(done.state).toMatchObject({ status: "succeeded", branch: "clustercode/1-r1" });
    expect(w.performed.filter((e) => e.type === "branch.move")).toEqual([
      expect.objectContaining({ branch: "clustercode/1-r1", from: "clustercode/1-r1-v2" }),
    ]);
    expect(done.state.costUsd).toBeCloseTo(0.0525, 6); // 3000 × $15 + 100 × $75, per MTok
    const [selected] = await kinds(store, "r1", "prototype.selected");
    expect(selected).toMatchObject({ variant: 2, why: "v2 fixes the slice; v1 only adds a TODO." });
    const [table] = await kinds(store, "r1", "prototype.variants");
    expect(table?.variants).toEqual([
      expect.objectContaining({
        variant: 1,
        engine: "claude",
        model: "claude-sonnet-4-5",
        gates: [{ name: "tests", exitCode: 0 }],
        // It passed its gates and lost the pick: passed, not cancelled.
        verdict: "passed",
      }),
      expect.objectContaining({
        variant: 2,
        engine: "codex",
        model: "gpt-5-codex",
        gates: [{ name: "tests", exitCode: 0 }],
        verdict: "won",
      }),
    ]);
    const [evaluated] = await kinds(store, "r1", "decision.evaluated");
    expect(evaluated).toMatchObject({
      verdict: "v2",
      model: "claude-opus-4-1-20250805",
      usage: { inputTokens: 3000, outputTokens: 100 },
    });
  });

  it("a valid OpenAI verdict routes the decision on its label", async () => {
    const scope = nock("https://openai.test")
      .post("/v1/chat/completions")
      .reply(200, chat({ label: "needs-changes", reasoning: "No test covers page 2." }));
    const { store, world: w } = await world();
    await w.runtime.start(definitionOf(review, { runId: "r2" }), { repo });
    const done = await w.settled("r2");
    scope.done();
    expect(done.state.status).toBe("escalated");
    expect(done.state.visits.map((v) => `${v.node}:${v.outcome}`)).toEqual([
      "build:succeeded",
      "review:needs-changes",
    ]);
    const [evaluated] = await kinds(store, "r2", "decision.evaluated");
    expect(evaluated).toMatchObject({
      evaluator: "agent",
      verdict: "needs-changes",
      reasoning: "No test covers page 2.",
      model: "gpt-5-2025-08-07",
    });
  });

  it("an out-of-enum label, twice, takes the default edge with the reason", async () => {
    const scope = nock("https://openai.test")
      .post("/v1/chat/completions")
      .twice()
      .reply(200, chat({ label: "ship-it", reasoning: "Great." }));
    const { world: w } = await world();
    await w.runtime.start(definitionOf(withDefault, { runId: "r3" }), { repo });
    const done = await w.settled("r3");
    scope.done();
    expect(done.state.status).toBe("escalated");
    expect(done.state.visits[1]).toMatchObject({ outcome: "default" });
    expect(done.state.visits[1]?.reason).toMatch(
      /^judge failed: openai judge gave no valid verdict in 2 attempts: invalid tool input: label/,
    );
    // The two failed attempts were still charged: 2 × (1000 × $1.25 + 50 × $10) per MTok.
    expect(done.state.costUsd).toBeCloseTo(0.0035, 6);
  });

  it.each([429, 500])(
    "HTTP %i without a default edge fails the node with the reason",
    async (status) => {
      const scope = nock("https://openai.test")
        .post("/v1/chat/completions")
        .reply(status, { error: { message: "try later", type: "server_error" } });
      const { world: w } = await world();
      await w.runtime.start(definitionOf(review, { runId: `r${status}` }), { repo });
      const done = await w.settled(`r${status}`);
      scope.done();
      expect(done.state).toMatchObject({ status: "failed", failedNode: "review" });
      expect(done.state.reason).toBe(
        `judge failed: openai API error (HTTP ${status}): ${status} try later`,
      );
    },
  );
});
