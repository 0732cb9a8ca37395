/**
 * Damerau–Levenshtein distance (optimal string alignment): how many one-character insertions,
 * deletions, substitutions or swaps of neighbours turn `a` into `b`. A swap counts as one edit
 * because it is the commonest typo ("cluade").
 */
export function editDistance(a: string, b: string): number {
  // Three rows suffice: a swap looks two rows back.
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(
        (previous[j] ?? 0) + 1,
        (current[j - 1] ?? 0) + 1,
        (previous[j - 1] ?? 0) + cost,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, (before[j - 2] ?? 0) + 1);
      }
      current[j] = best;
    }
    before = previous;
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/**
 * Most edits a typo of `word` may hold, relative to its length: one up to seven characters, two
 * up to ten, three beyond.
 */
function allowedEdits(word: string): number {
  return Math.min(3, Math.max(1, Math.floor((word.length - 2) / 3)));
}

/**
 * The one candidate `word` is most likely a typo of, or `undefined`: the nearest candidate within
 * {@link allowedEdits}, compared without regard to case, and only when no other candidate is as
 * near. A word that is itself a candidate has no suggestion.
 */
export function suggest(word: string, candidates: Iterable<string>): string | undefined {
  const lower = word.toLowerCase();
  let best: string | undefined;
  let bestDistance = allowedEdits(word) + 1;
  let tied = false;
  for (const candidate of new Set(candidates)) {
    if (candidate === word) return undefined;
    // Quick reject: the lengths alone differ by more than the budget.
    if (Math.abs(candidate.length - word.length) > bestDistance) continue;
    const distance = editDistance(lower, candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
      tied = false;
    } else if (distance === bestDistance) {
      tied = true;
    }
  }
  // A word every candidate is far from in proportion (two letters, two edits) is no typo.
  if (best === undefined || tied || bestDistance >= Math.min(word.length, best.length)) {
    return undefined;
  }
  return best;
}

/** A typo's suggestion as the end of a message: `did you mean "timeout"?`. */
export function didYouMean(suggestion: string): string {
  return `did you mean "${suggestion}"?`;
}

/** {@link suggest}, kept under the name the CLI's unknown-command message uses. */
export function closeMatch(word: string, candidates: readonly string[]): string | undefined {
  return suggest(word, candidates);
}
