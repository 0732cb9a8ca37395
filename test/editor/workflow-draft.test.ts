import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { emptyWorkflow, WorkflowDraft } from "../../src/editor/workflow-draft.js";
import { parseWorkflow } from "../../src/workflow/parse.js";

const LIFECYCLE = readFileSync(
  new URL("../../workflows-schema/examples/lifecycle.yml", import.meta.url),
  "utf8",
);

const COMMENTED = `# The release train: keep this comment.
version: 1
name: train # the name people see
on:
  label: clustercode
nodes:
  # Build first.
  build:
    kind: run
    run: make   # plain make
  ship:
    kind: run
    run: ./ship.sh
edges:
  - { from: build, to: ship } # in order
  - { from: ship, to: done }
`;

describe("the editor's YAML round-trip", () => {
  it("gives back the file unchanged when nothing was edited", () => {
    expect(new WorkflowDraft(LIFECYCLE).text()).toBe(LIFECYCLE);
    expect(new WorkflowDraft(COMMENTED).text()).toBe(COMMENTED);
  });

  it("keeps comments, key order and untouched lines when a field, a node and an edge change", () => {
    const draft = new WorkflowDraft(COMMENTED);
    draft.setNodeField("build", "run", "make all");
    const id = draft.addNode("decision", "check");
    draft.setNodeField(id, "evaluator", "status");
    draft.deleteEdge(1);
    draft.addEdge("ship", "check");
    const text = draft.text();
    expect(text).toContain("# The release train: keep this comment.");
    expect(text).toContain("name: train # the name people see");
    expect(text).toContain("# Build first.");
    expect(text).toContain("run: make all # plain make");
    expect(text).toContain(
      "  - { from: build, to: ship } # in order\n  - { from: ship, to: check }",
    );
    expect(Object.keys(parseWorkflowData(text))).toEqual([
      "version",
      "name",
      "on",
      "nodes",
      "edges",
    ]);
    expect(Object.keys(parseWorkflowData(text).nodes as object)).toEqual([
      "build",
      "ship",
      "check",
    ]);
  });

  it("renames a node where it stands, and every edge naming it", () => {
    const draft = new WorkflowDraft(COMMENTED);
    draft.renameNode("build", "compile");
    const text = draft.text();
    expect(text).toContain(
      "  # Build first.\n  compile:\n    kind: run\n    run: make   # plain make",
    );
    expect(text).toContain("{ from: compile, to: ship } # in order");
  });

  it("changes only the edited line of a file: no folding, no re-spacing elsewhere", () => {
    const draft = new WorkflowDraft(LIFECYCLE);
    draft.setEdgeField(5, "max_traversals", 4);
    const text = draft.text();
    expect(text).toContain(
      "  - { from: test-result, to: implement, label: failed, back: true, max_traversals: 4 }\n",
    );
    expect(text.replace("max_traversals: 4 }", "max_traversals: 3 }")).toBe(LIFECYCLE);
  });

  it("deletes a node with its edges, and a back-edge keeps its cap", () => {
    const draft = new WorkflowDraft(LIFECYCLE);
    draft.deleteNode("monitor");
    expect(draft.edges().some((edge) => edge.from === "monitor" || edge.to === "monitor")).toBe(
      false,
    );
    const back = draft.edges().find((edge) => edge.back);
    expect(back).toMatchObject({ from: "test-result", to: "implement", maxTraversals: 3 });
    expect(draft.text()).toContain("# The software lifecycle as ten nodes");
  });

  it("grows an empty workflow into one the validator accepts", () => {
    const draft = new WorkflowDraft(emptyWorkflow("hello"));
    const id = draft.addNode("run", "greet");
    draft.setNodeField(id, "run", "echo hello");
    draft.addEdge(id, "done");
    expect(draft.text()).toBe(
      "version: 1\nname: hello\non:\n  command: true\nnodes:\n  greet:\n    kind: run\n    run: echo hello\nedges:\n  - { from: greet, to: done }\n",
    );
    expect(parseWorkflow(draft.text())).toMatchObject({ ok: true, findings: [] });
  });
});

function parseWorkflowData(text: string): Record<string, unknown> {
  const result = parseWorkflow(text);
  if (!result.ok) throw new Error(JSON.stringify(result.findings));
  return result.workflow;
}
