import type { NodePositions } from "../workflow-files.js";

/** One state of the editor: the YAML text and where the boxes are. */
export interface Snapshot {
  yaml: string;
  positions: NodePositions;
}

/** Undo and redo over snapshots taken before each edit (at most 200 kept). */
export class History {
  readonly #undo: Snapshot[] = [];
  readonly #redo: Snapshot[] = [];

  /** Remembers the state before an edit; a new edit forgets what was undone. */
  checkpoint(before: Snapshot): void {
    this.#undo.push(copy(before));
    if (this.#undo.length > 200) this.#undo.shift();
    this.#redo.length = 0;
  }

  /** The state to go back to, given the current one; undefined when there is none. */
  undo(current: Snapshot): Snapshot | undefined {
    const previous = this.#undo.pop();
    if (previous !== undefined) this.#redo.push(copy(current));
    return previous;
  }

  /** The state to go forward to again. */
  redo(current: Snapshot): Snapshot | undefined {
    const next = this.#redo.pop();
    if (next !== undefined) this.#undo.push(copy(current));
    return next;
  }
}

function copy(snapshot: Snapshot): Snapshot {
  return { yaml: snapshot.yaml, positions: structuredClone(snapshot.positions) };
}
