import { describe, expect, it } from "vitest";
import { expectClean, expectOne, workflow } from "./helpers.js";

// impossible-label: a status decision routes on the outcomes its predecessors can produce.

const result = "result: { kind: decision, evaluator: status }";
const loop =
  "fix: { kind: loop, goal: Green tests, agent: { engine: claude }, budget: { max_iterations: 3 }, gates: [{ name: tests, run: npm test }] }";

describe("impossible-label on a status decision", () => {
  it("after a run node accepts succeeded, failed, timed_out and default", () => {
    const text = workflow(
      `build: { kind: run, run: make }\n${result}`,
      [
        "- { from: build, to: result }",
        "- { from: result, to: done, label: succeeded }",
        "- { from: result, to: failed, label: failed }",
        "- { from: result, to: escalated, label: timed_out }",
        "- { from: result, to: failed, label: default }",
      ].join("\n"),
    );
    expectClean(text);
  });

  it("after a run node refuses exhausted, which only a loop or a back-edge produces", () => {
    const text = workflow(
      `build: { kind: run, run: make }\n${result}`,
      "- { from: build, to: result }\n- { from: result, to: done, label: succeeded }\n- { from: result, to: escalated, label: exhausted }",
    );
    const finding = expectOne(text, "impossible-label", { needle: "exhausted" });
    expect(finding.message).toMatch(
      /status decision result can never produce "exhausted": use one of .*succeeded.*failed.*timed_out/,
    );
  });

  it("after a loop accepts exhausted", () => {
    const text = workflow(
      `${loop}\n${result}`,
      "- { from: fix, to: result }\n- { from: result, to: done, label: succeeded }\n- { from: result, to: escalated, label: exhausted }",
    );
    expectClean(text);
  });

  it("after an approval accepts approved, rejected and the on_timeout label", () => {
    const text = workflow(
      `build: { kind: run, run: make }\nship: { kind: approval, on_timeout: expired }\n${result}`,
      [
        "- { from: build, to: ship }",
        "- { from: ship, to: result, label: approved }",
        "- { from: ship, to: result, label: rejected }",
        "- { from: ship, to: result, label: expired }",
        "- { from: result, to: done, label: approved }",
        "- { from: result, to: failed, label: rejected }",
        "- { from: result, to: escalated, label: expired }",
      ].join("\n"),
    );
    expectClean(text);
  });

  it("after an approval refuses succeeded, which only container nodes produce", () => {
    const text = workflow(
      `build: { kind: run, run: make }\nship: { kind: approval }\n${result}`,
      [
        "- { from: build, to: ship }",
        "- { from: ship, to: result, label: approved }",
        "- { from: result, to: done, label: succeeded }",
      ].join("\n"),
    );
    const finding = expectOne(text, "impossible-label", { needle: "succeeded" });
    expect(finding.message).toMatch(/use one of .*approved.*rejected/);
  });

  it("unites the outcomes of several predecessors", () => {
    const text = workflow(
      `build: { kind: run, run: make }\nship: { kind: approval }\n${result}`,
      [
        "- { from: build, to: ship }",
        "- { from: ship, to: result, label: approved }",
        "- { from: ship, to: build, label: rejected, back: true }",
        "- { from: ship, to: escalated, label: exhausted }",
        "- { from: build, to: result }",
        "- { from: result, to: done, label: succeeded }",
        "- { from: result, to: done, label: approved }",
        "- { from: result, to: failed, label: pass }",
      ].join("\n"),
    );
    // succeeded comes from build, approved from ship; pass from neither.
    expectOne(text, "impossible-label", { needle: "pass" });
  });

  it("with an outgoing back-edge may also produce exhausted", () => {
    const text = workflow(
      `build: { kind: run, run: make }\n${result}`,
      [
        "- { from: build, to: result }",
        "- { from: result, to: done, label: succeeded }",
        "- { from: result, to: build, label: failed, back: true, max_traversals: 2 }",
        "- { from: result, to: escalated, label: exhausted }",
      ].join("\n"),
    );
    expectClean(text);
  });

  it("reads through an earlier status decision to the node before it", () => {
    const text = workflow(
      `build: { kind: run, run: make }\n${result}\nagain: { kind: decision, evaluator: status }`,
      [
        "- { from: build, to: result }",
        "- { from: result, to: again, label: failed }",
        "- { from: result, to: done, label: succeeded }",
        "- { from: again, to: failed, label: failed }",
        "- { from: again, to: done, label: approved }",
      ].join("\n"),
    );
    expectOne(text, "impossible-label", { needle: "approved" });
  });
});

describe("impossible-label on other sources", () => {
  it("refuses a label on the one edge of a run node", () => {
    const text = workflow(
      "build: { kind: run, run: make }\ntest: { kind: run, run: make test }",
      "- { from: build, to: test, label: succeeded }",
    );
    const finding = expectOne(text, "impossible-label", { needle: "succeeded" });
    expect(finding.message).toMatch(
      /run build routes on its one unlabelled edge and never produces "succeeded": remove the label/,
    );
  });

  it("refuses an approval label other than approved, rejected or on_timeout", () => {
    const text = workflow(
      "build: { kind: run, run: make }\nship: { kind: approval }",
      "- { from: build, to: ship }\n- { from: ship, to: done, label: lgtm }",
    );
    const finding = expectOne(text, "impossible-label", { needle: "lgtm" });
    expect(finding.message).toMatch(
      /approval ship can never produce "lgtm": use one of approved, rejected/,
    );
  });

  it("accepts any labels on an agent decision", () => {
    const text = workflow(
      "build: { kind: run, run: make }\nreview: { kind: decision, evaluator: agent, question: Good?, judge: { provider: anthropic, model: claude-opus-4-1 } }",
      "- { from: build, to: review }\n- { from: review, to: done, label: good-enough }\n- { from: review, to: escalated, label: needs-a-human }",
    );
    expectClean(text);
  });

  it("accepts exhausted from a loop without a back-edge", () => {
    const text = workflow(
      `${loop}\nbuild: { kind: run, run: make }`,
      "- { from: fix, to: build }\n- { from: fix, to: escalated, label: exhausted }",
    );
    expectClean(text);
  });
});
