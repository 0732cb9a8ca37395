import { describe, expect, it } from "vitest";
import { parseWorkflow } from "../../src/workflow/parse.js";

const text = (git: string) => `version: 1
name: t
on: { label: go }
devbox:
  git: ${git}
nodes:
  a: { kind: run, run: make }
`;

describe("devbox.git", () => {
  it("takes allow_workflow_changes, off unless set", () => {
    const allowed = parseWorkflow(text("{ allow_workflow_changes: true }"));
    expect(allowed.ok && allowed.workflow.devbox?.git?.allow_workflow_changes).toBe(true);
    const unset = parseWorkflow(text("{}"));
    expect(unset.ok && unset.workflow.devbox?.git?.allow_workflow_changes).toBeUndefined();
  });

  it("refuses anything else, naming the field", () => {
    const wrong = parseWorkflow(text("{ allow_workflow_changes: yes please }"));
    expect(wrong.ok).toBe(false);
    const unknown = parseWorkflow(text("{ allow_tags: true }"));
    expect(unknown.ok).toBe(false);
    expect(JSON.stringify(unknown.ok ? [] : unknown.findings)).toContain("allow_tags");
  });
});
