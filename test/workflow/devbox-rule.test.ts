import { describe, expect, it } from "vitest";
import { expectClean, expectOne, findingsOf, workflow } from "./helpers.js";

// decision-without-devbox: a run holds no DevBox at its entry and after an approval, until a
// run, loop or prototype claims one; status and agent decisions pass the state through.

const smoke = "smoke: { kind: decision, evaluator: deterministic, run: ./smoke.sh }";
const smokeEdges =
  "- { from: smoke, to: done, label: pass }\n- { from: smoke, to: failed, label: fail }";
const build = "build: { kind: run, run: make }";
const ship = "ship: { kind: approval }";
const agentGate =
  "gate: { kind: decision, evaluator: agent, question: Go on?, judge: { provider: openai, model: gpt-5 } }";

describe("decision-without-devbox", () => {
  it("flags run → approval → deterministic decision: the approval released the DevBox", () => {
    const text = workflow(
      `${build}\n${ship}\n${smoke}`,
      `- { from: build, to: ship }\n- { from: ship, to: smoke, label: approved }\n${smokeEdges}`,
    );
    const finding = expectOne(text, "decision-without-devbox", { needle: "smoke:" });
    expect(finding.message).toContain("after approval ship releases it");
  });

  it("accepts run → status decision → deterministic decision: status passes the DevBox on", () => {
    const text = workflow(
      `${build}\nresult: { kind: decision, evaluator: status }\n${smoke}`,
      `- { from: build, to: result }\n- { from: result, to: smoke, label: succeeded }\n- { from: result, to: failed, label: failed }\n${smokeEdges}`,
    );
    expectClean(text);
  });

  it("accepts run → agent decision → deterministic decision", () => {
    const text = workflow(
      `${build}\n${agentGate}\n${smoke}`,
      `- { from: build, to: gate }\n- { from: gate, to: smoke, label: go }\n- { from: gate, to: failed, label: stop }\n${smokeEdges}`,
    );
    expectClean(text);
  });

  it("flags approval → agent decision → deterministic: the agent decision claims no DevBox", () => {
    const text = workflow(
      `${build}\n${ship}\n${agentGate}\n${smoke}`,
      [
        "- { from: build, to: ship }",
        "- { from: ship, to: gate, label: approved }",
        "- { from: gate, to: smoke, label: go }",
        "- { from: gate, to: failed, label: stop }",
        smokeEdges,
      ].join("\n"),
    );
    expectOne(text, "decision-without-devbox", { needle: "smoke:" });
  });

  it("accepts approval → run → deterministic decision: the run claims a new DevBox", () => {
    const text = workflow(
      `${build}\n${ship}\ndeploy: { kind: run, run: ./deploy.sh }\n${smoke}`,
      [
        "- { from: build, to: ship }",
        "- { from: ship, to: deploy, label: approved }",
        "- { from: deploy, to: smoke }",
        smokeEdges,
      ].join("\n"),
    );
    expectClean(text);
  });

  it("follows back-edges: a decision first entered with a DevBox is flagged when a back-edge from after an approval re-enters it", () => {
    const text = workflow(
      `${build}\n${smoke}\n${ship}\nagain: { kind: decision, evaluator: status }`,
      [
        "- { from: build, to: smoke }",
        "- { from: smoke, to: done, label: pass }",
        "- { from: smoke, to: ship, label: fail }",
        "- { from: ship, to: again, label: approved }",
        "- { from: ship, to: failed, label: rejected }",
        "- { from: again, to: smoke, label: approved, back: true, max_traversals: 2 }",
        "- { from: again, to: escalated, label: exhausted }",
      ].join("\n"),
    );
    const finding = expectOne(text, "decision-without-devbox", { needle: "smoke:" });
    expect(finding.message).toContain("after approval ship releases it");
  });

  it("accepts the same back-edge shape when a run sits between the approval and the decision", () => {
    const text = workflow(
      `${build}\n${smoke}\n${ship}\nrebuild: { kind: run, run: make clean all }`,
      [
        "- { from: build, to: smoke }",
        "- { from: smoke, to: done, label: pass }",
        "- { from: smoke, to: ship, label: fail }",
        "- { from: ship, to: rebuild, label: approved }",
        "- { from: ship, to: failed, label: rejected }",
        "- { from: rebuild, to: smoke, back: true, max_traversals: 2 }",
        "- { from: rebuild, to: escalated, label: exhausted }",
      ].join("\n"),
    );
    expectClean(text);
  });

  it("flags a deterministic decision right after an approval at the entry", () => {
    const text = workflow(
      `${ship}\n${smoke}`,
      `- { from: ship, to: smoke, label: approved }\n- { from: ship, to: failed, label: rejected }\n${smokeEdges}`,
    );
    expectOne(text, "decision-without-devbox", { needle: "smoke:" });
  });

  it("ignores approvals the entry cannot reach", () => {
    const text = workflow(
      `${build}\n${smoke}\n${ship}`,
      `- { from: build, to: smoke }\n${smokeEdges}\n- { from: ship, to: smoke, label: approved }`,
    );
    expect(findingsOf(text, "decision-without-devbox")).toEqual([]);
    // The approval itself is reported as unreachable instead.
    expect(findingsOf(text, "unreachable-node").map((finding) => finding.path)).toEqual([
      "nodes.ship",
    ]);
  });

  it("flags a chain of deterministic decisions at the entry once per decision", () => {
    const text = workflow(
      `${smoke}\nlint: { kind: decision, evaluator: deterministic, run: make lint }\n${build}`,
      [
        "- { from: smoke, to: lint, label: pass }",
        "- { from: smoke, to: failed, label: fail }",
        "- { from: lint, to: build, label: pass }",
        "- { from: lint, to: failed, label: fail }",
      ].join("\n"),
    );
    expect(findingsOf(text, "decision-without-devbox").map((finding) => finding.path)).toEqual([
      "nodes.smoke",
      "nodes.lint",
    ]);
  });
});
