import { keepFormatting } from "./keep-formatting.js";
import { isMap, isScalar, isSeq, parseDocument, type Document, type YAMLMap } from "yaml";

/** The node kinds the editor can add. */
export const NODE_KINDS = ["run", "loop", "prototype", "decision", "approval"] as const;
/** A node kind. */
export type NodeKind = (typeof NODE_KINDS)[number];

/** An edge as the canvas draws it, by its index in `edges`. */
export interface DraftEdge {
  index: number;
  from: string;
  to: string;
  label?: string;
  back: boolean;
  maxTraversals?: number;
}

/** A node as the canvas draws it. */
export interface DraftNode {
  id: string;
  kind: string;
  title?: string;
}

/** No folding: long lines the author wrote, and each edge's one-line mapping, stay unbroken. */
const PRINT = { lineWidth: 0 } as const;

/** What a new, empty workflow file holds. */
export function emptyWorkflow(name: string): string {
  return `version: 1\nname: ${name}\non:\n  command: true\nnodes: {}\nedges: []\n`;
}

/**
 * A workflow being edited, kept as yaml's Document so that saving changes only what the editor
 * changed: comments, key order and formatting elsewhere stay as the author wrote them. Every
 * method is one edit the canvas or the side panel makes.
 */
export class WorkflowDraft {
  readonly document: Document;
  readonly #original: string;
  #edited = false;
  #reprinted: string | undefined;

  constructor(text: string) {
    this.#original = text;
    this.document = parseDocument(text);
  }

  /**
   * The YAML text, as it will be saved: the file exactly as read until something is edited, and
   * after an edit the author's own lines wherever the edit left them alone.
   */
  text(): string {
    if (!this.#edited) return this.#original;
    this.#reprinted ??= parseDocument(this.#original).toString(PRINT);
    return keepFormatting(this.#original, this.#reprinted, this.document.toString(PRINT));
  }

  /** The nodes in file order. */
  nodes(): DraftNode[] {
    const nodes = this.document.get("nodes");
    if (!isMap(nodes)) return [];
    return nodes.items.flatMap((pair) => {
      if (!isScalar(pair.key)) return [];
      const value = pair.value;
      const kind = isMap(value) ? value.get("kind") : undefined;
      const title = isMap(value) ? value.get("title") : undefined;
      return [
        {
          id: String(pair.key.value),
          kind: typeof kind === "string" ? kind : "run",
          ...(typeof title === "string" ? { title } : {}),
        },
      ];
    });
  }

  /** The edges in file order. */
  edges(): DraftEdge[] {
    const edges = this.document.get("edges");
    if (!isSeq(edges)) return [];
    return edges.items.flatMap((item, index) => {
      if (!isMap(item)) return [];
      const field = (key: string) => item.get(key);
      const label = field("label");
      const cap = field("max_traversals");
      return [
        {
          index,
          from: text(field("from")),
          to: text(field("to")),
          back: field("back") === true,
          ...(typeof label === "string" ? { label } : {}),
          ...(typeof cap === "number" ? { maxTraversals: cap } : {}),
        },
      ];
    });
  }

  /** A node's fields as plain data (for the side panel). */
  nodeFields(id: string): Record<string, unknown> {
    const node = this.document.getIn(["nodes", id]);
    return isMap(node) ? (node.toJSON() as Record<string, unknown>) : {};
  }

  /** A top-level field as plain data. */
  topField(key: string): unknown {
    const value = this.document.get(key);
    return isMap(value) || isSeq(value) ? value.toJSON() : value;
  }

  /** Adds a node of `kind`, named `id` or the first free `<kind>-N`; returns its id. */
  addNode(kind: NodeKind, id?: string): string {
    this.#edited = true;
    const taken = new Set(this.nodes().map((node) => node.id));
    let name = id ?? kind;
    for (let n = 2; taken.has(name); n++) name = `${id ?? kind}-${n}`;
    const nodes = this.#nodesMap();
    nodes.set(this.document.createNode(name), this.document.createNode({ kind }));
    return name;
  }

  /** Deletes a node and every edge to or from it. */
  deleteNode(id: string): void {
    this.#edited = true;
    this.document.deleteIn(["nodes", id]);
    for (const edge of this.edges().reverse()) {
      if (edge.from === id || edge.to === id) this.deleteEdge(edge.index);
    }
  }

  /** Renames a node in place (its comments and position kept) and every edge naming it. */
  renameNode(id: string, to: string): void {
    this.#edited = true;
    const nodes = this.document.get("nodes");
    if (!isMap(nodes) || id === to) return;
    const pair = nodes.items.find((item) => isScalar(item.key) && item.key.value === id);
    if (pair === undefined || !isScalar(pair.key)) return;
    pair.key.value = to;
    for (const edge of this.edges()) {
      if (edge.from === id) this.setEdgeField(edge.index, "from", to);
      if (edge.to === id) this.setEdgeField(edge.index, "to", to);
    }
  }

  /** Sets (or, with undefined, removes) a field of a node. */
  setNodeField(id: string, key: string, value: unknown): void {
    this.#set(["nodes", id, key], value);
  }

  /** Sets (or removes) a top-level field. */
  setTopField(key: string, value: unknown): void {
    this.#set([key], value);
  }

  /** Adds an edge; returns its index. */
  addEdge(from: string, to: string): number {
    this.#edited = true;
    let edges = this.document.get("edges");
    if (!isSeq(edges)) {
      this.document.set("edges", this.document.createNode([]));
      edges = this.document.get("edges");
    }
    if (!isSeq(edges)) return -1;
    // Written as the lifecycle example writes edges: one flow mapping per line.
    if (edges.items.length === 0) edges.flow = false;
    const edge = this.document.createNode({ from, to }) as YAMLMap;
    edge.flow = true;
    edges.add(edge);
    return edges.items.length - 1;
  }

  /** Deletes the edge at `index`. */
  deleteEdge(index: number): void {
    this.#edited = true;
    this.document.deleteIn(["edges", index]);
  }

  /** Sets (or removes) a field of the edge at `index`. */
  setEdgeField(index: number, key: string, value: unknown): void {
    this.#set(["edges", index, key], value);
  }

  #set(path: (string | number)[], value: unknown): void {
    this.#edited = true;
    if (value === undefined || value === "") {
      if (this.document.hasIn(path)) this.document.deleteIn(path);
      return;
    }
    const current = this.document.getIn(path, true);
    if (isScalar(current) && (typeof value !== "object" || value === null)) {
      current.value = value;
      return;
    }
    this.document.setIn(path, this.document.createNode(value));
  }

  #nodesMap(): YAMLMap {
    const nodes = this.document.get("nodes");
    if (isMap(nodes)) {
      // An empty `nodes: {}` grows into block style; a flow mapping the author wrote stays.
      if (nodes.items.length === 0) nodes.flow = false;
      return nodes;
    }
    const created = this.document.createNode({}) as YAMLMap;
    this.document.set("nodes", created);
    return created;
  }
}

/** A scalar as text: ids and labels may be written as numbers or booleans. */
function text(value: unknown): string {
  return typeof value === "string" || typeof value === "number" || typeof value === "boolean"
    ? String(value)
    : "";
}
