import { describe, expect, it } from "vitest";
import { describeEvidence, reasonNote } from "../../src/cli/evidence-narrator.js";

const setupOutput = Array.from({ length: 90 }, (_, i) => `line ${i + 1}`).join("\n");
const setupFailed = `DevBox failed to start: setup command 1 (npm ci) exited with 3\n${setupOutput}\n`;

describe("reasons in the human output", () => {
  it("keeps a one-line reason inline", () => {
    expect(reasonNote("a failed")).toBe(" (a failed)");
    expect(reasonNote(undefined)).toBe("");
  });

  it("shows a failed setup's output as its last 20 lines, one per line", () => {
    const lines = reasonNote(setupFailed).split("\n");
    expect(lines[0]).toBe(" (DevBox failed to start: setup command 1 (npm ci) exited with 3)");
    expect(lines[1]).toBe("  │ … 70 earlier lines (--format json has them all)");
    expect(lines.slice(2)).toEqual(Array.from({ length: 20 }, (_, i) => `  │ line ${i + 71}`));
  });

  it("prints a node that failed its setup that way", () => {
    const line = describeEvidence({
      kind: "node.finished",
      node: "build",
      outcome: "failed",
      reason: "setup command 1 (make) exited with 2\nmake: *** No rule to make target.",
      at: 0,
    });
    expect(line).toBe(
      "■ build: failed (setup command 1 (make) exited with 2)\n  │ make: *** No rule to make target.",
    );
  });

  it("describes a stop and a budget reset in a run's progress and log", () => {
    expect(
      describeEvidence({
        at: 0,
        kind: "node.stopping",
        node: "work",
        reason: "node timeout reached",
      }),
    ).toBe("  ⏹ work stopped (node timeout reached): checkpointing its work first");
    expect(describeEvidence({ at: 0, kind: "budget.reset", node: "fix", actor: "ops" })).toBe(
      "  ↺ budgets reset by ops for fix",
    );
  });
});
