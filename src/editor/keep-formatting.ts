/**
 * The edited text with the author's own lines put back wherever the edit left them alone.
 * yaml re-prints a whole document (spacing in flow collections, before comments), so the lines
 * an edit did not change are found by a longest-common-subsequence match between the re-printed
 * original and the re-printed edit, and replaced by the original's lines. When re-printing moved
 * lines around (their counts differ), the re-printed edit is kept as it is.
 */
export function keepFormatting(original: string, reprinted: string, edited: string): string {
  const before = original.split("\n");
  const printed = reprinted.split("\n");
  const after = edited.split("\n");
  if (before.length !== printed.length) return edited;
  const matches = commonLines(printed, after);
  return after.map((line, index) => before[matches[index] ?? -1] ?? line).join("\n");
}

/** For each line of `b`, the index of the line of `a` it is matched with, if any (LCS). */
function commonLines(a: string[], b: string[]): (number | undefined)[] {
  const width = b.length + 1;
  const table = new Uint32Array((a.length + 1) * width);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      table[i * width + j] =
        a[i] === b[j]
          ? (table[(i + 1) * width + j + 1] ?? 0) + 1
          : Math.max(table[(i + 1) * width + j] ?? 0, table[i * width + j + 1] ?? 0);
    }
  }
  const matches: (number | undefined)[] = new Array<number | undefined>(b.length);
  for (let i = 0, j = 0; i < a.length && j < b.length;) {
    if (a[i] === b[j]) matches[j++] = i++;
    else if ((table[(i + 1) * width + j] ?? 0) >= (table[i * width + j + 1] ?? 0)) i++;
    else j++;
  }
  return matches;
}
