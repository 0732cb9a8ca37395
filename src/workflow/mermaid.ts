import { DEFAULT_MAX_TRAVERSALS, TERMINALS, isTerminal } from "./graph.js";
import type { Workflow, WorkflowNode } from "./workflow.schema.js";

/** Where a run stands, for drawing it on the graph. */
export interface GraphProgress {
  /** The node the token is on. */
  active?: string;
  /** How often each node was visited. */
  visits?: Readonly<Record<string, number>>;
  /** How often each edge (by its index in `edges`) was crossed. */
  traversals?: Readonly<Record<number, number>>;
  /** The edges the run took (by index): drawn heavier. */
  taken?: ReadonlySet<number>;
  /** Each node's state (`succeeded`, `failed`, `running`, `waiting`, …): nodes are coloured by it. */
  states?: Readonly<Record<string, string>>;
}

/** Node colours by state, as the run pages draw them. */
const STATE_STYLES: Record<string, string> = {
  succeeded: "fill:#dafbe1,stroke:#1a7f37",
  failed: "fill:#ffebe9,stroke:#cf222e,stroke-width:3px",
  cancelled: "fill:#eaeef2,stroke:#6e7781",
  running: "fill:#ddf4ff,stroke:#0969da,stroke-width:3px",
  waiting: "fill:#fff8c5,stroke:#9a6700,stroke-width:3px",
  "not-reached": "fill:#ffffff,stroke:#d1d9e0,stroke-dasharray:4 3",
};

const SHAPES: Record<WorkflowNode["kind"], [string, string]> = {
  run: ["[", "]"],
  loop: ["([", "])"],
  prototype: ["[[", "]]"],
  decision: ["{", "}"],
  approval: ["{{", "}}"],
};

/**
 * A Mermaid flowchart of a workflow: node kinds visible, labels on edges, back-edges dashed with
 * their cap, terminals drawn, and optionally a run on it: the active node, counts, each node
 * coloured by its state and the edges the run took drawn heavier.
 */
export function renderMermaid(workflow: Workflow, progress: GraphProgress = {}): string {
  const ids = new Map<string, string>();
  Object.keys(workflow.nodes).forEach((id, index) => ids.set(id, `n${index}`));
  for (const terminal of TERMINALS) ids.set(terminal, `t_${terminal}`);
  const ref = (id: string) => ids.get(id) ?? `x_${id.replace(/[^a-z0-9]/g, "_")}`;

  const lines = [
    "flowchart TD",
    `  start(( )) --> ${ref(Object.keys(workflow.nodes)[0] ?? "done")}`,
  ];
  for (const [id, node] of Object.entries(workflow.nodes)) {
    const [open, close] = SHAPES[node.kind];
    const visits = progress.visits?.[id];
    const detail = [describeKind(node), visits === undefined ? undefined : `visits: ${visits}`]
      .filter((part) => part !== undefined)
      .join(" · ");
    lines.push(
      `  ${ref(id)}${open}"${escape(node.title ?? id)}<br/><small>${escape(detail)}</small>"${close}`,
    );
  }
  const used = new Set(workflow.edges.map((edge) => edge.to).filter(isTerminal));
  for (const terminal of TERMINALS)
    if (used.has(terminal)) lines.push(`  ${ref(terminal)}((${terminal}))`);

  workflow.edges.forEach((edge, index) => {
    const crossed = progress.traversals?.[index];
    if (edge.back === true) {
      const cap = edge.max_traversals ?? DEFAULT_MAX_TRAVERSALS;
      const count = crossed === undefined ? `≤${cap}×` : `${crossed}/${cap}`;
      const text = [edge.label, count].filter((part) => part !== undefined).join(" ");
      lines.push(`  ${ref(edge.from)} -.->|"${escape(text)}"| ${ref(edge.to)}`);
    } else {
      const text = [edge.label, crossed === undefined ? undefined : `${crossed}×`].filter(
        (p) => p !== undefined,
      );
      const arrow = text.length === 0 ? "-->" : `-->|"${escape(text.join(" "))}"|`;
      lines.push(`  ${ref(edge.from)} ${arrow} ${ref(edge.to)}`);
    }
  });

  lines.push(
    "  classDef done fill:#dafbe1,stroke:#1a7f37",
    "  classDef failed fill:#ffebe9,stroke:#cf222e",
    "  classDef escalated fill:#fff8c5,stroke:#9a6700",
    "  classDef active stroke:#0969da,stroke-width:3px",
  );
  for (const terminal of used) lines.push(`  class ${ref(terminal)} ${terminal}`);
  if (progress.states === undefined && progress.active !== undefined && ids.has(progress.active)) {
    lines.push(`  class ${ref(progress.active)} active`);
  }
  lines.push(...runStyles(workflow, progress, ref));
  return lines.join("\n") + "\n";
}

/** Node colours by state and the taken edges' style (link 0 is the start arrow). */
function runStyles(workflow: Workflow, progress: GraphProgress, ref: (id: string) => string) {
  const lines: string[] = [];
  const states = progress.states;
  if (states === undefined) return lines;
  for (const state of new Set(Object.values(states))) {
    const style = STATE_STYLES[state];
    if (style === undefined) continue;
    const name = `s_${state.replace(/[^a-z]/g, "_")}`;
    const members = Object.keys(workflow.nodes).filter((id) => states[id] === state);
    lines.push(`  classDef ${name} ${style}`, `  class ${members.map(ref).join(",")} ${name}`);
  }
  const taken = [...(progress.taken ?? [])].sort((a, b) => a - b);
  if (taken.length > 0) {
    lines.push(
      `  linkStyle ${taken.map((index) => index + 1).join(",")} stroke:#0969da,stroke-width:3px`,
    );
  }
  return lines;
}

function describeKind(node: WorkflowNode): string {
  switch (node.kind) {
    case "run":
      return node.agent === undefined ? "run · command" : `run · ${node.agent.engine}`;
    case "loop":
      return `loop · ${node.agent.engine} · ≤${node.budget?.max_iterations ?? "?"} iterations`;
    case "prototype":
      return `prototype · ${node.variants.length} variants · select ${node.select}`;
    case "decision":
      return `decision · ${node.evaluator}`;
    case "approval":
      return "approval";
  }
}

function escape(text: string): string {
  return text.replace(/"/g, "#quot;").replace(/</g, "#lt;").replace(/>/g, "#gt;");
}
