/** The closest known key within an edit distance of 2 (or a case-insensitive match). */
export function didYouMean(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestD = Number.POSITIVE_INFINITY;
  for (const c of candidates) {
    const d = c.toLowerCase() === word.toLowerCase() ? 0 : levenshtein(word, c);
    if (d < bestD) {
      bestD = d;
      best = c;
    }
  }
  return bestD <= Math.max(2, Math.floor(word.length / 3)) ? best : undefined;
}

/**
 * Up to `n` candidates closest to `word` (edit distance, ties in the candidates' order),
 * each within the distance didYouMean allows, or at most half the word's length: a
 * mistyped file name is often further from the right one than a mistyped key.
 */
export function nearest(word: string, candidates: readonly string[], n = 3): string[] {
  const limit = Math.max(2, Math.floor(word.length / 2));
  return candidates
    .map((c, i) => ({ c, i, d: c.toLowerCase() === word.toLowerCase() ? 0 : levenshtein(word, c) }))
    .filter((x) => x.d <= limit)
    .sort((a, b) => a.d - b.d || a.i - b.i)
    .slice(0, n)
    .map((x) => x.c);
}

function levenshtein(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = prev[j]!;
      prev[j] = Math.min(prev[j]! + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = tmp;
    }
  }
  return prev[b.length]!;
}
