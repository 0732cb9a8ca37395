/** Lines shown above and below the line a finding points at. */
const CONTEXT_LINES = 1;
/** Longest source line shown whole; longer ones are cut around the column. */
const MAX_WIDTH = 100;

/**
 * The source around a 1-based `line` and `column`, as Babel and TypeScript print it: the line
 * marked with `>`, its neighbours, and a `^` under the column. Empty when the line is not in
 * `text` or the text is blank (a finding about the whole file).
 *
 * ```
 *   4 | nodes:
 * > 5 |   build: { kind: run, run: make, timout: 1h }
 *     |                                  ^
 *   6 | edges:
 * ```
 */
export function codeFrame(text: string, line: number, column: number): string {
  if (text.trim() === "") return "";
  const lines = text.split(/\r?\n/);
  if (text.endsWith("\n")) lines.pop();
  if (line < 1 || line > lines.length) return "";
  const first = Math.max(1, line - CONTEXT_LINES);
  const last = Math.min(lines.length, line + CONTEXT_LINES);
  const width = String(last).length;
  const { shift, caret } = window(lines[line - 1] ?? "", column);
  const gutter = (number: number | "") => ` ${String(number).padStart(width)} |`;
  const out: string[] = [];
  for (let number = first; number <= last; number++) {
    const source = clip(lines[number - 1] ?? "", shift);
    const marker = number === line ? ">" : " ";
    out.push(`${marker}${gutter(number)}${source === "" ? "" : ` ${source}`}`);
    if (number === line) out.push(` ${gutter("")} ${caret}^`);
  }
  return out.join("\n") + "\n";
}

/**
 * Where to start showing a long line so the column stays in view, and the padding that puts the
 * caret under the column (tabs kept as tabs so the caret lines up in a terminal).
 */
function window(source: string, column: number): { shift: number; caret: string } {
  const index = Math.max(0, Math.min(column - 1, source.length));
  const shift = source.length <= MAX_WIDTH ? 0 : Math.max(0, index - Math.floor(MAX_WIDTH / 2));
  const before = source.slice(shift, index).replace(/[^\t]/g, " ");
  return { shift, caret: (shift > 0 ? "   " : "") + before };
}

/** A line cut to {@link MAX_WIDTH} characters from `shift`, with `...` where it was cut. */
function clip(source: string, shift: number): string {
  if (source.length <= MAX_WIDTH) return source;
  const part = source.slice(shift, shift + MAX_WIDTH);
  return `${shift > 0 ? "..." : ""}${part}${shift + MAX_WIDTH < source.length ? "..." : ""}`;
}
