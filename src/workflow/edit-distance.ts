/** Levenshtein distance: how many one-character edits turn `a` into `b`. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(
        (previous[j] ?? 0) + 1,
        (current[j - 1] ?? 0) + 1,
        (previous[j - 1] ?? 0) + cost,
      );
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/** {@link editDistance} where swapping two neighbouring characters counts as one edit. */
function typoDistance(a: string, b: string): number {
  const swapped = Array.from(a, (_, i) => i)
    .slice(1)
    .filter((i) => a[i] !== a[i - 1])
    .map((i) => a.slice(0, i - 1) + a[i] + a[i - 1] + a.slice(i + 1));
  return Math.min(editDistance(a, b), ...swapped.map((swap) => 1 + editDistance(swap, b)));
}

/**
 * The first of `candidates` a typo away from `word`: one edit for words of up to four letters
 * (so "foo" suggests nothing), two for longer ones; a swap of neighbours counts as one.
 */
export function closeMatch(word: string, candidates: readonly string[]): string | undefined {
  const allowed = word.length <= 4 ? 1 : 2;
  return candidates.find((candidate) => typoDistance(word, candidate) <= allowed);
}
