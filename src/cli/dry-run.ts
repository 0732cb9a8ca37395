import { isTerminal } from "../workflow/graph.js";
import type { Edge, Workflow, WorkflowNode } from "../workflow/workflow.schema.js";

/**
 * What `run --dry-run` prints: the path a walk takes where every node succeeds (a status
 * decision sees `succeeded`, an approval is approved, another decision takes its first label,
 * said as assumed), with what each node would run. Nothing is started.
 */
export function dryRun(workflow: Workflow): string {
  const lines = [`dry run of ${workflow.name}: the path when every node succeeds`];
  let at = Object.keys(workflow.nodes)[0];
  const seen = new Set<string>();
  while (at !== undefined && !isTerminal(at)) {
    const node = workflow.nodes[at];
    if (node === undefined || seen.has(at)) {
      lines.push(`  ↻ back to ${at}: the walk stops here`);
      return `${lines.join("\n")}\n`;
    }
    seen.add(at);
    lines.push(`▶ ${at} (${node.kind})`, ...whatItRuns(node).map((line) => `    ${line}`));
    const { edge, note } = edgeOf(workflow.edges, at, node);
    if (edge === undefined) {
      lines.push(`  no edge for its outcome: the run would fail here`);
      return `${lines.join("\n")}\n`;
    }
    lines.push(`  → ${edge.to}${edge.label === undefined ? "" : ` on ${edge.label}`}${note}`);
    at = edge.to;
  }
  lines.push(`● ${at ?? "done"}`);
  return `${lines.join("\n")}\n`;
}

/** The edge the walk takes from `id`, and a note when the outcome is assumed. */
function edgeOf(edges: Edge[], id: string, node: WorkflowNode): { edge?: Edge; note: string } {
  const out = edges.filter((edge) => edge.from === id);
  const labelled = (label: string) =>
    out.find((edge) => edge.label === label) ?? out.find((edge) => edge.label === "default");
  if (node.kind === "approval") return { ...found(labelled("approved")), note: "" };
  if (node.kind === "decision" && node.evaluator === "status") {
    return { ...found(labelled("succeeded")), note: "" };
  }
  if (node.kind === "decision") {
    const first = out.find((edge) => edge.label !== undefined);
    return { ...found(first), note: ` (assumed: ${node.evaluator} decides at run time)` };
  }
  return { ...found(out.find((edge) => edge.label === undefined)), note: "" };
}

function found(edge: Edge | undefined): { edge?: Edge } {
  return edge === undefined ? {} : { edge };
}

/** What a node would run, in a few lines. */
function whatItRuns(node: WorkflowNode): string[] {
  switch (node.kind) {
    case "run":
      return node.run !== undefined
        ? node.run
            .trimEnd()
            .split("\n")
            .map((line) => `$ ${line}`)
        : [`agent ${agentOf(node.agent)}: ${firstLine(node.prompt)}`];
    case "loop":
      return [
        `agent ${agentOf(node.agent)} toward: ${firstLine(node.goal)}`,
        ...(node.gates ?? []).map((gate) => `gate ${gate.name}: $ ${firstLine(gate.run)}`),
      ];
    case "prototype":
      return [
        `${node.variants.length} variants of: ${firstLine(node.brief)}`,
        ...(node.gates ?? []).map((gate) => `gate ${gate.name}: $ ${firstLine(gate.run)}`),
        `select: ${node.select ?? "first"}`,
      ];
    case "decision":
      return [
        `${node.evaluator} decision${node.run === undefined ? "" : `: $ ${firstLine(node.run)}`}${node.question === undefined ? "" : `: ${firstLine(node.question)}`}`,
      ];
    case "approval":
      return [`waits for approval${node.message === undefined ? "" : `: ${node.message}`}`];
  }
}

function agentOf(agent: { engine: string; model?: string | undefined } | undefined): string {
  if (agent === undefined) return "(none)";
  return agent.model === undefined ? agent.engine : `${agent.engine}/${agent.model}`;
}

function firstLine(text: string | undefined): string {
  return (text ?? "").trim().split("\n")[0] ?? "";
}
