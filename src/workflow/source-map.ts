import { isAlias, isMap, isPair, isScalar, isSeq, type Document, type Node } from "yaml";
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
  /** Offset of the first character of each line. */
  readonly #lineStarts: number[] = [0];

  // Lines are counted from the text itself: yaml's LineCounter misses the line breaks inside
  // some multi-line tokens, which put findings past the end of their line.
  constructor(document: Document, text: string) {
    this.#document = document;
    for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) {
      this.#lineStarts.push(at + 1);
    }
  }

  /** A finding at `path`; a path that does not exist points at its deepest existing part. */
  finding(
    rule: RuleId,
    path: readonly PathSegment[],
    message: string,
    options: { severity?: Severity; target?: Target; suggestion?: string | undefined } = {},
  ): Finding {
    const offset = this.#offset(path, options.target ?? "value");
    const finding = this.findingAt(rule, offset, formatPath(path), message, options.severity);
    return options.suggestion === undefined
      ? finding
      : { ...finding, suggestion: options.suggestion };
  }

  /** A finding at a character offset of the source. */
  findingAt(
    rule: RuleId,
    offset: number,
    path: string,
    message: string,
    severity: Severity = "error",
  ): Finding {
    const { line, column } = this.#position(offset);
    return { rule, severity, message, path, line, column };
  }

  /** 1-based line and column of a character offset, by binary search over the line starts. */
  #position(offset: number): { line: number; column: number } {
    let low = 0;
    let high = this.#lineStarts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if ((this.#lineStarts[middle] ?? 0) <= offset) low = middle;
      else high = middle - 1;
    }
    return { line: low + 1, column: offset - (this.#lineStarts[low] ?? 0) + 1 };
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

/** The path of `node` from the ancestors `visit` hands a visitor. */
export function yamlPath(ancestors: readonly unknown[], node: unknown): PathSegment[] {
  return ancestors.flatMap((ancestor, index): PathSegment[] => {
    if (isPair(ancestor)) return isScalar(ancestor.key) ? [String(ancestor.key.value)] : [];
    if (!isSeq(ancestor)) return [];
    const child = ancestors[index + 1] ?? node;
    return [ancestor.items.indexOf(child)];
  });
}
