import { describe, expect, it } from "vitest";
import type { EvidenceEntry } from "../../src/engine/model.js";
import { renderCheckRuns } from "../../src/github/surfaces/render-checks.js";
import { renderStatusComment } from "../../src/github/surfaces/render-status.js";
import { buildRunView } from "../../src/ui/build-run-view.js";
import { renderRunPage } from "../../src/ui/view/render-run.js";
import { renderVisitPage } from "../../src/ui/view/render-visit.js";
import { atApproval, replayGolden } from "./replayed-run.js";

const PATHS = { run: "/runs/Codertocat/Hello-World/r1", index: "/runs/Codertocat/Hello-World" };
const NODES = [
  "requirements",
  "design",
  "implement",
  "test",
  "test-result",
  "review",
  "deploy-approval",
  "deploy",
  "monitor",
  "incident",
];

const atTheApproval = replayGolden("lifecycle-rework-and-reject", { until: atApproval });

describe("the run view", async () => {
  const { run, evidence } = atTheApproval;
  const view = await buildRunView(run, evidence, { branch: "https://github.com/x/tree/b" });

  it("places the token on the graph and shows the approval waited on", () => {
    expect(view.status).toBe("awaiting_input");
    expect(view.final).toBe(false);
    expect(view.graph.nodes.map((node) => node.id)).toEqual(NODES);
    expect(view.graph.nodes.find((node) => node.state === "waiting")?.id).toBe("deploy-approval");
    expect(view.graph.nodes.find((node) => node.id === "implement")?.visits).toBe(3);
    const rework = view.graph.edges.find((edge) => edge.label === "needs-changes");
    expect(rework).toMatchObject({ back: true, traversals: 2, maxTraversals: 2 });
    expect(view.approval).toMatchObject({
      node: "deploy-approval",
      message: "Ship this change to production?",
      approvers: ["@acme/release"],
      visit: 14,
    });
    expect(view.brief).toBe("Add a greeting <img src=x onerror=alert(1)>");
  });

  it("opens a loop to its iterations: gates, exit codes, output tails and the feedback handed on", () => {
    const loop = view.visits[6]?.loop;
    expect(loop?.goal).toBe("Implement DESIGN.md until the tests and the linter pass.");
    expect(loop?.maxIterations).toBe(8);
    expect(
      loop?.iterations.map((it) => [it.iteration, it.gates.map((g) => `${g.name}:${g.exitCode}`)]),
    ).toEqual([
      [1, ["tests:1", "lint:0"]],
      [2, ["tests:0", "lint:0"]],
    ]);
    const feedback = loop?.iterations[0]?.feedback ?? [];
    expect(feedback.map((item) => item.gate)).toEqual(["tests"]);
    expect(feedback[0]?.output).toMatch(/^output of c\d+$/);
    expect(loop?.iterations[0]?.agent).toMatchObject({
      engine: "claude",
      model: "claude-sonnet-4-5",
    });
  });

  it("opens a prototype to its variants side by side with the judge's verdict and reasoning", () => {
    const prototype = view.visits[1]?.prototype;
    expect(prototype?.variants.map((v) => [v.variant, v.engine, v.branch, v.result])).toEqual([
      [1, "claude", "clustercode/1-r1-v1", "won"],
      // It passed its gate and lost the judging: passed, not cancelled.
      [2, "codex", "clustercode/1-r1-v2", "passed"],
    ]);
    expect(prototype?.variants[0]?.gates).toEqual([{ name: "design-written", exitCode: 0 }]);
    expect(prototype?.judge).toEqual({ verdict: "v1", reasoning: "because" });
    expect(prototype?.winner).toBe(1);
  });

  it("shows spend against the run, iteration and daily budgets, and each visit's evidence", () => {
    expect(view.budgets.map((budget) => [budget.name.split(" (")[0], budget.limitUsd])).toEqual([
      ["run", 120],
      ["iteration of implement", 3],
      ["daily cost of lifecycle/implement", 60],
    ]);
    const review = view.visits[5];
    expect(review?.decision).toMatchObject({ evaluator: "agent", verdict: "needs-changes" });
    const commands = view.visits[0]?.evidence.filter((line) => line.kind === "command.dispatched");
    expect(commands?.[0]?.facts).toContainEqual({ label: "model", value: "claude-sonnet-4-5" });
    expect(view.visits[0]?.commit).toMatch(/^sha-/);
  });

  it("counts the tokens an agent reported, and leaves them out where none were", async () => {
    const reported = replayGolden("lifecycle-rework-and-reject", {
      until: atApproval,
      result: (result) => ({ ...result, usage: { inputTokens: 100, outputTokens: 20 } }),
    });
    const tokens = (await buildRunView(reported.run, reported.evidence)).visits[6]?.loop
      ?.iterations;
    expect(tokens?.map((iteration) => iteration.tokens)).toEqual([
      { input: 100, output: 20 },
      { input: 100, output: 20 },
    ]);
    expect(view.visits[6]?.loop?.iterations[0]?.tokens).toBeUndefined();
  });

  it("shows what the store does not record as absent, not invented", () => {
    const facts = view.visits.flatMap((visit) => visit.evidence.flatMap((line) => line.facts));
    expect(facts.some((fact) => fact.label === "harness version")).toBe(false);
    expect(facts.some((fact) => fact.label === "diff stat")).toBe(false);
  });
});

describe("the pages", async () => {
  const { run, evidence } = replayGolden("lifecycle-rework-and-reject", {
    until: atApproval,
    result: (result) => ({
      ...result,
      output: `${result.output}\n<script>alert("pwned")</script>`,
    }),
  });
  const view = await buildRunView(run, evidence);

  it("name every node, the status, and offer Approve and Reject on a run waiting at an approval", () => {
    const html = renderRunPage(view, PATHS);
    for (const node of NODES) expect(html).toContain(`>${node}<`);
    expect(html).toContain('data-status="awaiting_input">awaiting input<');
    expect(html).toContain('data-decision="approved">Approve</button>');
    expect(html).toContain('data-decision="rejected">Reject</button>');
    expect(html).toContain('href="/runs/Codertocat/Hello-World/r1/visits/6"');
  });

  it("escape untrusted text: output tails, the brief, reasoning", () => {
    const pages = [renderRunPage(view, PATHS), renderVisitPage(view, 6, PATHS)];
    for (const html of pages) {
      expect(html).not.toContain("<script>");
      expect(html).not.toContain("<img");
    }
    expect(pages[1]).toContain("&lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt;");
    expect(pages[0]).toContain("Add a greeting &lt;img src=x onerror=alert(1)&gt;");
  });

  it("render a loop's iterations and a prototype's variants on their own pages", () => {
    const loop = renderVisitPage(view, 6, PATHS);
    expect(loop).toContain("Iteration 1");
    expect(loop).toContain("Feedback handed to iteration 2");
    const prototype = renderVisitPage(view, 1, PATHS);
    expect(prototype).toContain("Variant 1 · winner");
    expect(prototype).toContain("clustercode/1-r1-v2");
    expect(prototype).toContain('<blockquote class="reasoning">because</blockquote>');
  });
});

describe("links from GitHub to the pages", () => {
  const { run, evidence } = replayGolden("lifecycle-rework-and-reject", { until: atApproval });
  const { definition, state } = run.document;
  const entries = evidence.map((record) => record.entry as EvidenceEntry);
  const page = "https://cc.example.com/runs/Codertocat/Hello-World/r1";

  it("give every check run a details_url: a loop's and a prototype's their own page", () => {
    const specs = renderCheckRuns(definition, state, entries, page);
    expect(specs.find((spec) => spec.externalId === "r1")?.detailsUrl).toBe(page);
    expect(specs.find((spec) => spec.externalId === "r1/6")?.detailsUrl).toBe(`${page}/visits/6`);
    expect(specs.find((spec) => spec.externalId === "r1/1")?.detailsUrl).toBe(`${page}/visits/1`);
    expect(specs.find((spec) => spec.externalId === "r1/14")?.detailsUrl).toBe(`${page}#visit-14`);
    expect(specs.every((spec) => spec.detailsUrl?.startsWith(page))).toBe(true);
    expect(renderCheckRuns(definition, state, entries).some((s) => s.detailsUrl)).toBe(false);
  });

  it("put the run page in the status comment only when there is one", () => {
    expect(renderStatusComment(definition, state, { runPageUrl: page })).toContain(
      `[run page](${page})`,
    );
    expect(renderStatusComment(definition, state)).not.toContain("run page");
  });
});
