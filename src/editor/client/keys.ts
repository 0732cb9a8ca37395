import { NODE_KINDS, type NodeKind } from "../workflow-draft.js";
import type { Editor } from "./editor-state.js";

const STEP = 10;
const ARROWS: Record<string, [number, number]> = {
  ArrowLeft: [-STEP, 0],
  ArrowRight: [STEP, 0],
  ArrowUp: [0, -STEP],
  ArrowDown: [0, STEP],
};

/**
 * The editor from the keyboard: Tab moves through nodes and edges (focusing one selects it),
 * Enter goes to its fields, N adds a node, arrows move the selected node, C connects it, Delete
 * deletes, Ctrl+Z / Ctrl+Y undo and redo, Ctrl+S saves, Escape returns to the canvas.
 */
export function bindKeys(editor: Editor): void {
  const canvas = document.getElementById("canvas") as HTMLElement;
  canvas.addEventListener("focusin", (event) => {
    const element = (event.target as Element).closest<SVGElement>("[data-node],[data-edge]");
    if (element === null) return;
    const node = element.dataset.node;
    const selection =
      node !== undefined
        ? { kind: "node" as const, id: node }
        : { kind: "edge" as const, index: Number(element.dataset.edge) };
    const same = JSON.stringify(selection) === JSON.stringify(editor.selection);
    if (!same && !/^(done|failed|escalated)$/.test(node ?? "")) editor.select(selection);
  });
  document.addEventListener("keydown", (event) => {
    if (command(editor, event)) {
      event.preventDefault();
      return;
    }
    const typing = (event.target as Element).closest("input, textarea, select") !== null;
    if (typing) {
      if (event.key === "Escape") (event.target as HTMLElement).blur();
      return;
    }
    if (canvasKey(editor, event)) event.preventDefault();
  });
}

/** Ctrl/Cmd shortcuts, which work in fields too. */
function command(editor: Editor, event: KeyboardEvent): boolean {
  if (!(event.ctrlKey || event.metaKey)) return false;
  const key = event.key.toLowerCase();
  if (key === "s") void editor.save();
  else if (key === "z" && !event.shiftKey) editor.restore(editor.history.undo(editor.snapshot()));
  else if (key === "y" || (key === "z" && event.shiftKey))
    editor.restore(editor.history.redo(editor.snapshot()));
  else return false;
  return true;
}

function canvasKey(editor: Editor, event: KeyboardEvent): boolean {
  const selection = editor.selection;
  const arrow = ARROWS[event.key];
  if (arrow !== undefined && selection?.kind === "node") {
    const at = editor.positions[selection.id] ?? { x: 0, y: 0 };
    editor.edit(() => {
      editor.positions[selection.id] = {
        x: Math.max(0, at.x + arrow[0]),
        y: Math.max(0, at.y + arrow[1]),
      };
    });
    return true;
  }
  switch (event.key) {
    case "n":
    case "N": {
      const kind = (document.getElementById("kind") as HTMLSelectElement).value;
      editor.addNode(NODE_KINDS.includes(kind as NodeKind) ? (kind as NodeKind) : "run");
      return true;
    }
    case "c":
    case "C":
      if (selection?.kind !== "node") return false;
      document.getElementById("connect-to")?.focus();
      return true;
    case "Enter":
      document.querySelector<HTMLElement>("#panel input, #panel select, #panel textarea")?.focus();
      return selection !== undefined;
    case "Delete":
    case "Backspace":
      editor.deleteSelection();
      return true;
    case "Escape":
      editor.select(undefined);
      return true;
    default:
      return false;
  }
}
