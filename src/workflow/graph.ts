/** The terminals an edge may lead to. */
export const TERMINALS = ["done", "failed", "escalated"] as const;
/** A terminal: where a run ends. */
export type Terminal = (typeof TERMINALS)[number];

/** Is `id` a terminal? */
export function isTerminal(id: string): id is Terminal {
  return (TERMINALS as readonly string[]).includes(id);
}

/** Default and ceiling of a back-edge's `max_traversals`. */
export const DEFAULT_MAX_TRAVERSALS = 3;
export const MAX_TRAVERSALS_CEILING = 20;

/** The outcomes each container node kind can produce. */
export const KIND_OUTCOMES: Record<string, readonly string[]> = {
  run: ["succeeded", "failed", "timed_out"],
  loop: ["succeeded", "failed", "exhausted", "timed_out"],
  prototype: ["succeeded", "failed", "timed_out"],
};

/**
 * The outcomes of a container node kind, or `undefined` for other kinds. Looks at own keys only:
 * a node of kind "constructor" must not find `Object.prototype.constructor`.
 */
export function containerOutcomes(kind: string | undefined): readonly string[] | undefined {
  return kind !== undefined && Object.hasOwn(KIND_OUTCOMES, kind) ? KIND_OUTCOMES[kind] : undefined;
}

/** A node as the graph analysis sees it, whether or not its fields passed the schema. */
export interface GraphNode {
  id: string;
  /** Position among the nodes; 0 is the entry. */
  index: number;
  kind: string | undefined;
  fields: Record<string, unknown>;
}

/** An edge as the graph analysis sees it. */
export interface GraphEdge {
  /** Position in the `edges` list. */
  index: number;
  from: string;
  to: string;
  label: string | undefined;
  back: boolean;
  fields: Record<string, unknown>;
}

/**
 * The shape of a workflow's graph, read leniently from parsed YAML so that graph rules can
 * report alongside schema findings. Edges whose endpoints are not strings are left out.
 */
export class WorkflowGraph {
  readonly nodes = new Map<string, GraphNode>();
  readonly edges: GraphEdge[] = [];
  /** `rework.node`: a second way in, for a succeeded run whose work was sent back. */
  readonly reworkNode: string | undefined;

  constructor(data: unknown) {
    const root = asRecord(data);
    const rework = asRecord(root.rework).node;
    this.reworkNode = typeof rework === "string" ? rework : undefined;
    for (const [index, [id, value]] of Object.entries(asRecord(root.nodes)).entries()) {
      const fields = asRecord(value);
      const kind = typeof fields.kind === "string" ? fields.kind : undefined;
      this.nodes.set(id, { id, index, kind, fields });
    }
    const edges = Array.isArray(root.edges) ? (root.edges as unknown[]) : [];
    for (const [index, value] of edges.entries()) {
      const fields = asRecord(value);
      if (typeof fields.from !== "string" || typeof fields.to !== "string") continue;
      this.edges.push({
        index,
        from: fields.from,
        to: fields.to,
        label: typeof fields.label === "string" ? fields.label : undefined,
        back: fields.back === true,
        fields,
      });
    }
  }

  /** The entry node: the first one. */
  get entry(): GraphNode | undefined {
    return this.nodes.values().next().value;
  }

  /** Edges leaving `id`, in file order. */
  outgoing(id: string): GraphEdge[] {
    return this.edges.filter((edge) => edge.from === id);
  }

  /** Edges entering `id`, in file order. */
  incoming(id: string): GraphEdge[] {
    return this.edges.filter((edge) => edge.to === id);
  }

  /** Does `edge` connect two existing nodes (or a node to a terminal)? */
  isWellFormed(edge: GraphEdge): boolean {
    return this.nodes.has(edge.from) && (this.nodes.has(edge.to) || isTerminal(edge.to));
  }

  /** The evaluator of a decision node, if it has a known one. */
  evaluator(node: GraphNode): string | undefined {
    return node.kind === "decision" && typeof node.fields.evaluator === "string"
      ? node.fields.evaluator
      : undefined;
  }

  /** The label an approval takes when its window lapses. */
  timeoutLabel(node: GraphNode): string {
    return typeof node.fields.on_timeout === "string" ? node.fields.on_timeout : "rejected";
  }

  /**
   * The edge labels `id` can produce, or `undefined` when any label is possible (agent
   * decisions, unknown kinds). Container nodes route on their one unlabelled edge, so they
   * produce only `exhausted`: a loop whose budget runs out, or any node whose back-edge is
   * spent.
   */
  producibleLabels(id: string, seen: ReadonlySet<string> = new Set()): Set<string> | undefined {
    const node = this.nodes.get(id);
    if (node === undefined) return undefined;
    const labels = new Set<string>();
    if (node.kind === "loop" || this.outgoing(id).some((edge) => edge.back))
      labels.add("exhausted");
    const evaluator = this.evaluator(node);
    if (node.kind === "approval") {
      labels.add("approved").add("rejected").add(this.timeoutLabel(node));
    } else if (evaluator === "deterministic") {
      labels.add("pass").add("fail").add("default");
    } else if (evaluator === "status") {
      labels.add("default");
      const inner = new Set(seen).add(id);
      for (const edge of this.incoming(id)) {
        if (inner.has(edge.from)) continue;
        const upstream = this.outcomes(edge.from, inner);
        if (upstream === undefined) return undefined;
        for (const label of upstream) labels.add(label);
      }
    } else if (containerOutcomes(node.kind) === undefined) {
      return undefined;
    }
    return labels;
  }

  /** The outcomes `id` can end with, which a status decision after it routes on. */
  outcomes(id: string, seen: ReadonlySet<string> = new Set()): Set<string> | undefined {
    const container = containerOutcomes(this.nodes.get(id)?.kind);
    if (container !== undefined) return new Set(container);
    const labels = this.producibleLabels(id, seen);
    labels?.delete("default");
    return labels;
  }

  /** Node ids reachable from the entry (or `rework.node`), following forward and back edges. */
  reachable(): Set<string> {
    const entry = this.entry;
    const seen = new Set<string>();
    const queue = entry === undefined ? [] : [entry.id];
    if (this.reworkNode !== undefined) queue.push(this.reworkNode);
    while (queue.length > 0) {
      const id = queue.shift() as string;
      if (seen.has(id) || !this.nodes.has(id)) continue;
      seen.add(id);
      for (const edge of this.outgoing(id)) queue.push(edge.to);
    }
    return seen;
  }

  /**
   * Cycles made only of forward edges, each given as the edge that closes it and the node ids
   * along it.
   */
  forwardCycles(): { closing: GraphEdge; path: string[] }[] {
    const cycles: { closing: GraphEdge; path: string[] }[] = [];
    const state = new Map<string, "active" | "done">();
    const stack: string[] = [];
    const visit = (id: string): void => {
      state.set(id, "active");
      stack.push(id);
      for (const edge of this.outgoing(id)) {
        if (edge.back || !this.nodes.has(edge.to)) continue;
        const seen = state.get(edge.to);
        if (seen === "active") {
          cycles.push({ closing: edge, path: [...stack.slice(stack.indexOf(edge.to)), edge.to] });
        } else if (seen === undefined) {
          visit(edge.to);
        }
      }
      stack.pop();
      state.set(id, "done");
    };
    for (const id of this.nodes.keys()) if (!state.has(id)) visit(id);
    return cycles;
  }
}

function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}
