import jstat from 'jstat';

/** A least-squares line through one value per second, and how sure its slope's sign is. */
export interface Trend {
  /** Values fitted (seconds). */
  readonly n: number;
  /** Units per second. */
  readonly slope: number;
  /** The fitted value at the last second. */
  readonly last: number;
  /** Standard error of the slope (0 for an exact line). */
  readonly slopeSe: number;
  /** The slope is positive at the given confidence (one-sided t test on n - 2 degrees of freedom). */
  readonly rising: boolean;
  /** The slope is negative at the given confidence. */
  readonly falling: boolean;
}

/**
 * Ordinary least squares of y against its index, with a one-sided t test of the slope.
 * Null values are skipped (a second the scraper did not answer); fewer than 3 values
 * give null. A flat series (zero residuals) is neither rising nor falling unless its
 * slope is exactly non-zero.
 */
export function trendOf(ys: readonly (number | null)[], confidence = 0.95): Trend | null {
  const xs: number[] = [];
  const vs: number[] = [];
  ys.forEach((y, i) => {
    if (y !== null && Number.isFinite(y)) {
      xs.push(i);
      vs.push(y);
    }
  });
  const n = xs.length;
  if (n < 3) return null;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = vs.reduce((a, b) => a + b, 0) / n;
  let sxx = 0;
  let sxy = 0;
  for (let i = 0; i < n; i++) {
    sxx += (xs[i]! - mx) ** 2;
    sxy += (xs[i]! - mx) * (vs[i]! - my);
  }
  const slope = sxy / sxx;
  const intercept = my - slope * mx;
  let sse = 0;
  for (let i = 0; i < n; i++) sse += (vs[i]! - (intercept + slope * xs[i]!)) ** 2;
  const slopeSe = Math.sqrt(sse / (n - 2) / sxx);
  const tCrit = jstat.jStat.studentt.inv(confidence, n - 2);
  const sure = (s: number): boolean => (slopeSe === 0 ? s > 1e-12 : s / slopeSe > tCrit);
  return {
    n,
    slope,
    last: intercept + slope * (ys.length - 1),
    slopeSe,
    rising: sure(slope),
    falling: sure(-slope),
  };
}
