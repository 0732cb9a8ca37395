import {
  isAlias,
  isMap,
  isPair,
  isScalar,
  isSeq,
  type Document,
  type LineCounter,
  type Node,
} from "yaml";
import {
  formatPath,
  type Finding,
  type PathSegment,
  type RuleId,
  type Severity,
} from "./finding.js";

/** Where a YAML path points: at the key of a mapping entry or at its value. */
export type Target = "key" | "value";

/** Turns paths into the YAML document into findings with line and column. */
export class SourceMap {
  readonly #document: Document;
  readonly #lines: LineCounter;

  constructor(document: Document, lines: LineCounter) {
    this.#document = document;
    this.#lines = lines;
  }

  /** A finding at `path`; a path that does not exist points at its deepest existing part. */
  finding(
    rule: RuleId,
    path: readonly PathSegment[],
    message: string,
    options: { severity?: Severity; target?: Target } = {},
  ): Finding {
    const offset = this.#offset(path, options.target ?? "value");
    return this.findingAt(rule, offset, formatPath(path), message, options.severity);
  }

  /** A finding at a character offset of the source. */
  findingAt(
    rule: RuleId,
    offset: number,
    path: string,
    message: string,
    severity: Severity = "error",
  ): Finding {
    const { line, col } = this.#lines.linePos(offset);
    return { rule, severity, message, path, line, column: col };
  }

  #offset(path: readonly PathSegment[], target: Target): number {
    let current: unknown = this.#document.contents;
    let best = rangeStart(current) ?? 0;
    let parentKey: number | undefined;
    for (const [index, segment] of path.entries()) {
      if (isAlias(current)) current = current.resolve(this.#document);
      let key: unknown;
      if (isMap(current)) {
        const pair = current.items.find(
          (item) => isPair(item) && keyText(item.key) === String(segment),
        );
        key = pair?.key;
        current = pair?.value;
      } else if (isSeq(current) && typeof segment === "number") {
        current = current.items[segment];
      } else {
        break;
      }
      if (current === undefined && key === undefined) return parentKey ?? best;
      const last = index === path.length - 1;
      const keyStart = rangeStart(key);
      const valueStart = rangeStart(current);
      parentKey = keyStart;
      if (last && target === "key" && keyStart !== undefined) return keyStart;
      if (valueStart !== undefined && !(isScalar(current) && current.value === null)) {
        best = valueStart;
      } else if (keyStart !== undefined) {
        best = keyStart;
      } else {
        break;
      }
    }
    return best;
  }
}

function keyText(key: unknown): string | undefined {
  return isScalar(key) ? String(key.value) : undefined;
}

function rangeStart(node: unknown): number | undefined {
  return (node as Node | undefined)?.range?.[0];
}
