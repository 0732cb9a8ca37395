import { expect, it } from "vitest";
import { describeEvidence } from "../../src/cli/run-output.js";

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
