import type { Editor } from "./editor-state.js";

/** A node being dragged: where it started and where the pointer took hold of it. */
interface Drag {
  id: string;
  offsetX: number;
  offsetY: number;
  moved: boolean;
  before: ReturnType<Editor["snapshot"]>;
}

/**
 * The canvas's pointer: clicking selects a node or an edge, dragging a node moves it, dragging
 * from a node's bottom handle to another node (or a terminal) adds an edge.
 */
export function bindPointer(editor: Editor): void {
  const canvas = document.getElementById("canvas") as HTMLElement;
  let drag: Drag | undefined;
  const point = (event: PointerEvent) => {
    const box = canvas.querySelector("svg")?.getBoundingClientRect();
    return { x: event.clientX - (box?.left ?? 0), y: event.clientY - (box?.top ?? 0) };
  };
  canvas.addEventListener("pointerdown", (event) => {
    const target = event.target as Element;
    const port = target.closest("[data-port]");
    const node = target.closest("[data-node]");
    const edge = target.closest("[data-edge]");
    if (port instanceof SVGElement && port.dataset.port !== undefined) {
      editor.wire = { from: port.dataset.port, ...point(event) };
      editor.render();
    } else if (node instanceof SVGElement && node.dataset.node !== undefined) {
      const id = node.dataset.node;
      const at = editor.positions[id] ?? { x: 0, y: 0 };
      const { x, y } = point(event);
      drag = { id, offsetX: x - at.x, offsetY: y - at.y, moved: false, before: editor.snapshot() };
      if (!id.match(/^(done|failed|escalated)$/)) editor.select({ kind: "node", id });
    } else if (edge instanceof SVGElement) {
      editor.select({ kind: "edge", index: Number(edge.dataset.edge) });
    } else {
      editor.select(undefined);
    }
    event.preventDefault();
    canvas.focus({ preventScroll: true });
  });
  window.addEventListener("pointermove", (event) => {
    if (editor.wire !== undefined) {
      editor.wire = { ...editor.wire, ...point(event) };
      editor.render();
    } else if (drag !== undefined) {
      const { x, y } = point(event);
      if (!drag.moved) editor.history.checkpoint(drag.before);
      drag.moved = true;
      editor.positions[drag.id] = {
        x: Math.max(0, x - drag.offsetX),
        y: Math.max(0, y - drag.offsetY),
      };
      editor.render();
    }
  });
  window.addEventListener("pointerup", (event) => {
    const wire = editor.wire;
    editor.wire = undefined;
    drag = undefined;
    if (wire === undefined) return;
    const under = document.elementFromPoint(event.clientX, event.clientY)?.closest("[data-node]");
    const to = (under as SVGElement | null | undefined)?.dataset.node;
    if (to !== undefined && to !== wire.from) editor.connect(wire.from, to);
    else editor.render();
  });
}
