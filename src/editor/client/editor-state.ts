import { parse } from "yaml";
import { autoLayout, NODE_SIZE } from "../auto-layout.js";
import { targetOf } from "../finding-targets.js";
import type { SchemaFields } from "../schema-fields.js";
import { WorkflowDraft, type NodeKind } from "../workflow-draft.js";
import type { NodePositions, OpenedWorkflow } from "../workflow-files.js";
import type { Finding } from "../../workflow/finding.js";
import { TERMINALS } from "../../workflow/graph.js";
import { parseWorkflow } from "../../workflow/parse.js";
import { esc } from "../../ui/view/html.js";
import { renderCanvas, type Selection } from "./canvas.js";
import { History, type Snapshot } from "./history.js";
import { renderPanel } from "./panel.js";

/** Where the editor saves, from the page. */
export interface EditorConfig {
  fileApi: string;
  csrf: string;
  saves: "file" | "pull-request";
}

const byId = (id: string) => document.getElementById(id) as HTMLElement;

/**
 * The editor's state (the draft, positions, selection, findings, history) and its drawing. Each
 * edit checkpoints the history, applies to the YAML draft, validates with the CLI's validator
 * and redraws.
 */
export class Editor {
  draft: WorkflowDraft;
  positions: NodePositions;
  selection: Selection;
  findings: Finding[] = [];
  wire: { from: string; x: number; y: number } | undefined;
  readonly history = new History();
  #version: string;

  constructor(
    opened: OpenedWorkflow,
    readonly schema: SchemaFields,
    readonly config: EditorConfig,
  ) {
    this.draft = new WorkflowDraft(opened.yaml);
    this.positions = { ...opened.positions };
    this.#version = opened.version;
  }

  /** Lays out (with elkjs) the boxes the layout file has no position for. */
  async layoutMissing(known: NodePositions, all = false): Promise<void> {
    const boxes = [...this.draft.nodes().map((node) => node.id), ...TERMINALS];
    if (!all && boxes.every((id) => known[id] !== undefined)) return;
    const laid = await autoLayout({ boxes, edges: this.draft.edges() });
    this.positions = all ? laid : { ...laid, ...known };
  }

  snapshot(): Snapshot {
    return { yaml: this.draft.text(), positions: this.positions };
  }

  /** Applies one edit with a history checkpoint; `panel` redraws the side panel too. */
  edit(change: () => void, options: { panel?: boolean } = {}): void {
    this.history.checkpoint(this.snapshot());
    change();
    this.render(options);
  }

  restore(snapshot: Snapshot | undefined): void {
    if (snapshot === undefined) return;
    this.draft = new WorkflowDraft(snapshot.yaml);
    this.positions = snapshot.positions;
    this.render({ panel: true });
  }

  select(selection: Selection): void {
    this.selection = selection;
    this.render({ panel: true });
  }

  /** Adds a node of the chosen kind below the others, selects it and focuses its id. */
  addNode(kind: NodeKind): void {
    this.edit(
      () => {
        const id = this.draft.addNode(kind);
        const lowest = Math.max(
          -40,
          ...this.draft.nodes().map((n) => this.positions[n.id]?.y ?? -40),
        );
        this.positions[id] = { x: 60, y: lowest + NODE_SIZE.height + 50 };
        this.selection = { kind: "node", id };
      },
      { panel: true },
    );
    byId("field-id").focus();
  }

  connect(from: string, to: string): void {
    if (from === to && !TERMINALS.includes(to as never)) return;
    this.edit(
      () => {
        this.selection = { kind: "edge", index: this.draft.addEdge(from, to) };
      },
      { panel: true },
    );
  }

  deleteSelection(): void {
    const selection = this.selection;
    if (selection === undefined) return;
    this.edit(
      () => {
        if (selection.kind === "node") {
          this.draft.deleteNode(selection.id);
          delete this.positions[selection.id];
        } else this.draft.deleteEdge(selection.index);
        this.selection = undefined;
      },
      { panel: true },
    );
  }

  /** Validates the draft and redraws the canvas and findings (and the panel when asked). */
  render(options: { panel?: boolean } = {}): void {
    this.findings = parseWorkflow(this.draft.text()).findings;
    const focused = document.activeElement?.closest("[data-node],[data-edge]");
    const key =
      focused === null || focused === undefined ? undefined : focusKey(focused as HTMLElement);
    byId("canvas").innerHTML = renderCanvas({
      nodes: this.draft.nodes(),
      edges: this.draft.edges(),
      positions: this.positions,
      selection: this.selection,
      findings: this.findings,
      ...(this.wire === undefined ? {} : { wire: this.wire }),
    });
    if (key !== undefined) byId("canvas").querySelector<HTMLElement>(key)?.focus();
    this.#renderFindings();
    if (options.panel === true)
      byId("panel").innerHTML = renderPanel(this.draft, this.selection, this.schema);
    document.body.dataset.findings = String(this.findings.length);
  }

  /** Applies a changed panel field. */
  applyField(input: HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement): void {
    if (input.dataset.role === "rename") {
      this.#rename(input.value.trim());
      return;
    }
    const key = input.dataset.key;
    if (key === undefined) return;
    const value = fieldValue(input);
    if (value instanceof Error) {
      status(`${key}: ${value.message}`, false);
      return;
    }
    const selection = this.selection;
    this.edit(() => {
      if (selection?.kind === "node") this.draft.setNodeField(selection.id, key, value);
      else if (selection?.kind === "edge") this.draft.setEdgeField(selection.index, key, value);
      else this.draft.setTopField(key, value);
    });
  }

  async save(): Promise<void> {
    status("Saving…");
    const answer = await fetch(this.config.fileApi, {
      method: "PUT",
      headers: { "content-type": "application/json", "x-clustercode-csrf": this.config.csrf },
      body: JSON.stringify({
        yaml: this.draft.text(),
        version: this.#version,
        positions: this.positions,
      }),
    });
    const result = (await answer.json()) as {
      message: string;
      version?: string;
      pullRequest?: string;
    };
    if (answer.ok && result.version !== undefined) this.#version = result.version;
    status(result.message, answer.ok, result.pullRequest);
  }

  bindToolbar(): void {
    const kind = byId("kind") as HTMLSelectElement;
    byId("add-node").addEventListener("click", () => this.addNode(kind.value as NodeKind));
    byId("undo").addEventListener("click", () => this.restore(this.history.undo(this.snapshot())));
    byId("redo").addEventListener("click", () => this.restore(this.history.redo(this.snapshot())));
    byId("save").addEventListener("click", () => void this.save());
    byId("layout").addEventListener("click", () => {
      this.history.checkpoint(this.snapshot());
      void this.layoutMissing({}, true).then(() => this.render());
    });
    byId("panel").addEventListener("change", (event) => {
      const target = event.target as HTMLInputElement;
      if (target.id !== "connect-to") this.applyField(target);
    });
    byId("panel").addEventListener("click", (event) => {
      const target = event.target as HTMLElement;
      if (target.id === "delete") this.deleteSelection();
      if (target.id === "connect" && this.selection?.kind === "node")
        this.connect(this.selection.id, (byId("connect-to") as HTMLSelectElement).value);
    });
    byId("findings").addEventListener("click", (event) => {
      const item = (event.target as HTMLElement).closest("li");
      const finding = this.findings[Number(item?.dataset.index)];
      if (finding !== undefined) this.#selectTarget(finding);
    });
  }

  #rename(to: string): void {
    const selection = this.selection;
    if (selection?.kind !== "node" || to === selection.id || to === "") return;
    if (this.draft.nodes().some((node) => node.id === to)) {
      status(`There is already a node "${to}".`, false);
      return;
    }
    this.edit(
      () => {
        this.draft.renameNode(selection.id, to);
        const position = this.positions[selection.id];
        if (position !== undefined) this.positions[to] = position;
        delete this.positions[selection.id];
        this.selection = { kind: "node", id: to };
      },
      { panel: true },
    );
  }

  #selectTarget(finding: Finding): void {
    const target = targetOf(finding);
    if (target.kind === "node") this.select({ kind: "node", id: target.id });
    else if (target.kind === "edge") this.select({ kind: "edge", index: target.index });
    else this.select(undefined);
  }

  #renderFindings(): void {
    byId("findings").innerHTML =
      this.findings.length === 0
        ? `<li class="none">No findings: the workflow is valid.</li>`
        : this.findings
            .map(
              (f, index) =>
                `<li class="${f.severity}" data-index="${index}" data-rule="${esc(f.rule)}"><b>${esc(f.rule)}</b> ${esc(f.message)} <small>line ${f.line}:${f.column}${f.path === "" ? "" : ` · ${esc(f.path)}`}</small></li>`,
            )
            .join("");
  }
}

/** The value a field's input holds, as the YAML should hold it; an Error for bad YAML. */
function fieldValue(input: HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement): unknown {
  const raw = input.value;
  if (raw.trim() === "") return undefined;
  switch (input.dataset.control) {
    case "boolean":
      return raw === "true";
    case "number":
      return Number(raw);
    case "yaml":
      try {
        return parse(raw) as unknown;
      } catch (error) {
        return new Error(`not YAML: ${(error as Error).message.split("\n")[0]}`);
      }
    default:
      return raw;
  }
}

function focusKey(element: HTMLElement): string {
  return element.dataset.node !== undefined
    ? `[data-node="${CSS.escape(element.dataset.node)}"]`
    : `[data-edge="${CSS.escape(element.dataset.edge ?? "")}"]`;
}

/** Shows what happened (a save's result, a refused edit) in the toolbar. */
export function status(message: string, ok?: boolean, link?: string): void {
  const element = byId("status");
  element.textContent = message;
  if (ok === undefined) delete element.dataset.ok;
  else element.dataset.ok = String(ok);
  if (link !== undefined) {
    const anchor = document.createElement("a");
    anchor.href = link;
    anchor.textContent = " Open the pull request";
    element.append(anchor);
  }
}
