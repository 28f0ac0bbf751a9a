/**
 * Nearest-rank percentile of an ascending array: the smallest value with at least p% of
 * the samples at or below it (rank = ceil(p/100 * n), never interpolated). Null for no samples.
 */
export function nearestRank(sortedAsc: readonly number[], p: number): number | null {
  const n = sortedAsc.length;
  if (n === 0) return null;
  if (!(p > 0)) return sortedAsc[0]!;
  const rank = Math.min(n, Math.ceil((p / 100) * n - 1e-9));
  return sortedAsc[Math.max(1, rank) - 1]!;
}

export function mean(xs: readonly number[]): number | null {
  if (xs.length === 0) return null;
  let s = 0;
  for (const x of xs) s += x;
  return s / xs.length;
}
