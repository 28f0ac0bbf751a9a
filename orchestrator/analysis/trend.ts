import jstat from 'jstat';
import { OrderStatistics } from './orderStatistics.js';

/**
 * Trend tests on one value per second. Per-second goodput and queue depth are strongly
 * autocorrelated (a queue remembers), so a least-squares t test, which assumes
 * independent residuals, finds "trends" in a flat but wandering series. The outcome's
 * test is the Mann–Kendall test with the Hamed & Rao (1998) variance correction for
 * autocorrelated data, and its slope Sen's (1968) estimator with Sen's confidence
 * interval (taken with the same corrected variance of S). No maintained npm package
 * does either; the code follows the papers and is checked against the documented
 * output of pyMannKendall (Hussain & Mahmud 2019) and scipy.stats.theilslopes.
 *
 * - Mann, H. B. (1945). Nonparametric tests against trend. Econometrica 13, 245–259.
 * - Kendall, M. G. (1975). Rank Correlation Methods. Griffin.
 * - Hamed, K. H., Rao, A. R. (1998). A modified Mann-Kendall trend test for
 *   autocorrelated data. Journal of Hydrology 204, 182–196.
 * - Sen, P. K. (1968). Estimates of the regression coefficient based on Kendall's tau.
 *   JASA 63, 1379–1389. (Interval as in Gilbert, R. O. (1987), Statistical Methods for
 *   Environmental Pollution Monitoring, §16.5.)
 */

/** The Mann–Kendall statistics of a series, with the Hamed–Rao correction. */
export interface MannKendall {
  /** Values tested (nulls skipped). */
  readonly n: number;
  /** S = Σ_{i<j} sign(x_j − x_i). */
  readonly s: number;
  /** Var(S) under independence, corrected for ties. */
  readonly varS0: number;
  /** Var(S) × n/n*, the Hamed–Rao correction (n/n* = 1 without it). */
  readonly varS: number;
  /** n/n*: how much the autocorrelation of the ranks inflates Var(S). */
  readonly nOverNStar: number;
  /** (S ∓ 1)/√Var(S), 0 when S = 0 or Var(S) = 0. */
  readonly z: number;
  /** Two-sided p value of z. */
  readonly p: number;
  /** Kendall's tau, S / (n(n−1)/2). */
  readonly tau: number;
  /** Sen's slope: the median of the pairwise slopes. */
  readonly slope: number;
}

export interface MannKendallOptions {
  /**
   * Autocorrelation lags the correction uses: all significant ones when absent (as
   * pyMannKendall's default), the first `lag` significant ones otherwise, none with 0
   * (the original, uncorrected test).
   */
  readonly lag?: number;
  /** Significance of the lags kept in the correction (two-sided), 0.05 by default. */
  readonly alpha?: number;
  /**
   * Also model the ranks' autocorrelation as AR(1), r_k = r_1^k with r_1 corrected for
   * its small-sample bias, and keep the larger of the two corrections (see trendOf).
   */
  readonly ar1?: boolean;
}

/**
 * The Mann–Kendall test of `xs` (index = time, nulls skipped) with Hamed & Rao's
 * variance correction: detrend by Sen's slope, rank, take the autocorrelations of the
 * ranks that are significant at `alpha` (|r_k| > z_{1−α/2}/√n), and inflate Var(S) by
 * n/n* = 1 + 2/(n(n−1)(n−2)) Σ_k (n−k)(n−k−1)(n−k−2) r_k. Null with fewer than 3 values.
 * A degenerate correction (n/n* ≤ 0, possible only with strong negative correlation)
 * falls back to the uncorrected variance rather than an infinite z.
 */
export function mannKendall(
  xs: readonly (number | null)[],
  opts: MannKendallOptions = {},
): MannKendall | null {
  const { t, y } = present(xs);
  if (y.length < 3) return null;
  return mannKendallOf(y, slopeOrder(t, y), opts);
}

/** mannKendall of the values present, `slopes` their pairwise slopes. */
function mannKendallOf(y: readonly number[], slopes: OrderStatistics, opts: MannKendallOptions): MannKendall {
  const n = y.length;
  const s = kendallS(y);
  const varS0 = tieCorrectedVariance(y);
  const slope = medianOf(slopes);
  const alpha = opts.alpha ?? 0.05;
  const maxLag = opts.lag === undefined ? n - 1 : Math.min(opts.lag, n - 1);
  let nOverNStar = 1;
  if (maxLag > 0) {
    // Hamed & Rao detrend by the index 1..n (as pyMannKendall): only the ranks matter.
    const ranks = rank(y.map((v, i) => v - (i + 1) * slope));
    const r = acf(ranks, maxLag);
    const bound = normalInv(1 - alpha / 2) / Math.sqrt(n);
    let sum = 0;
    for (let k = 1; k <= maxLag; k++)
      if (Math.abs(r[k]!) > bound) sum += (n - k) * (n - k - 1) * (n - k - 2) * r[k]!;
    const c = 1 + (2 / (n * (n - 1) * (n - 2))) * sum;
    if (c > 0 && Number.isFinite(c)) nOverNStar = c;
    if (opts.ar1) {
      // Marriott & Pope (1954): E[r_1] ≈ φ − (1 + 3φ)/n, so φ ≈ r_1 + (1 + 3 r_1)/n.
      const phi = Math.min(0.99, Math.max(0, r[1]! + (1 + 3 * r[1]!) / n));
      let ar = 0;
      for (let k = 1, rk = phi; k <= n - 3 && rk > 1e-9; k++, rk *= phi)
        ar += (n - k) * (n - k - 1) * (n - k - 2) * rk;
      nOverNStar = Math.max(nOverNStar, 1 + (2 / (n * (n - 1) * (n - 2))) * ar);
    }
  }
  const varS = varS0 * nOverNStar;
  const z = s === 0 || varS <= 0 ? 0 : (s - Math.sign(s)) / Math.sqrt(varS);
  return {
    n,
    s,
    varS0,
    varS,
    nOverNStar,
    z,
    p: 2 * (1 - normalCdf(Math.abs(z))),
    tau: s / ((n * (n - 1)) / 2),
    slope,
  };
}

/** Sen's slope with its confidence interval (Sen 1968; Gilbert 1987 §16.5.2). */
export interface SenSlope {
  readonly slope: number;
  readonly low: number;
  readonly high: number;
  /** The line passes through (medianT, medianY) (Conover's intercept, as scipy's). */
  readonly medianT: number;
  readonly medianY: number;
}

/**
 * Sen's interval at `confidence` (two-sided): with N' pairwise slopes sorted and
 * C = z_{1−α/2} √Var(S), the bounds are the round((N' − C)/2)-th and
 * (round((N' + C)/2) + 1)-th slopes (1-based), clamped to the slopes there are.
 * `varS` is Var(S) (the Hamed–Rao corrected one for an autocorrelated series).
 */
export function senSlope(xs: readonly (number | null)[], varS: number, confidence = 0.95): SenSlope | null {
  const { t, y } = present(xs);
  if (y.length < 2) return null;
  return senSlopeOf(t, y, slopeOrder(t, y), varS, confidence);
}

/** senSlope of the values present at `t` (ascending), `slopes` their pairwise slopes. */
function senSlopeOf(
  t: readonly number[],
  y: readonly number[],
  slopes: OrderStatistics,
  varS: number,
  confidence: number,
): SenSlope {
  const nt = slopes.length;
  const c = normalInv(1 - (1 - confidence) / 2) * Math.sqrt(Math.max(0, varS));
  const lo = Math.max(Math.round((nt - c) / 2) - 1, 0);
  const hi = Math.min(Math.round((nt + c) / 2), nt - 1);
  return {
    slope: medianOf(slopes),
    low: slopes.at(lo),
    high: slopes.at(hi),
    medianT: sortedMedian(Float64Array.from(t)),
    medianY: median(Float64Array.from(y)),
  };
}

/** A trend over a series: Sen's slope and interval, and the corrected Mann–Kendall test. */
export interface Trend {
  /** Values fitted (seconds). */
  readonly n: number;
  /** Sen's slope, units per second, and its interval at the same confidence (two-sided). */
  readonly slope: number;
  readonly slopeLow: number;
  readonly slopeHigh: number;
  /** The Sen line's value at the series' last index. */
  readonly last: number;
  /** The line passes through (medianT, medianY): index and value. */
  readonly medianT: number;
  readonly medianY: number;
  /** Mann–Kendall z with the Hamed–Rao correction, and the correction n/n*. */
  readonly z: number;
  readonly nOverNStar: number;
  /** An upward trend at the given confidence (one-sided corrected Mann–Kendall test). */
  readonly rising: boolean;
  /** A downward trend at the given confidence. */
  readonly falling: boolean;
}

/**
 * The robust trend of one value per second (index = second, nulls skipped): the
 * Hamed–Rao corrected Mann–Kendall test, one-sided at `confidence`, and Sen's slope
 * with its interval. Fewer than 3 values give null; a constant series is neither
 * rising nor falling.
 */
export function trendOf(ys: readonly (number | null)[], confidence = 0.95): Trend | null {
  const { t, y } = present(ys);
  if (y.length < 3) return null;
  // Both take order statistics of the pairwise slopes: made once (a tail of 500 s has 125,000).
  const slopes = slopeOrder(t, y);
  const mk = mannKendallOf(y, slopes, { ar1: true });
  const sen = senSlopeOf(t, y, slopes, mk.varS, confidence);
  const zCrit = normalInv(confidence);
  return {
    n: mk.n,
    slope: sen.slope,
    slopeLow: sen.low,
    slopeHigh: sen.high,
    last: sen.medianY + sen.slope * (ys.length - 1 - sen.medianT),
    medianT: sen.medianT,
    medianY: sen.medianY,
    z: mk.z,
    nOverNStar: mk.nOverNStar,
    rising: mk.z > zCrit,
    falling: mk.z < -zCrit,
  };
}

/** A least-squares line and its one-sided t test: kept to show what autocorrelation does to it. */
export interface OlsTrend {
  readonly n: number;
  readonly slope: number;
  readonly slopeSe: number;
  readonly t: number;
  readonly rising: boolean;
  readonly falling: boolean;
}

/**
 * Ordinary least squares of y against its index with a one-sided t test of the slope
 * on n − 2 degrees of freedom. It assumes independent residuals: on an autocorrelated
 * series it calls far too many trends (see trend.test.ts). Not used for verdicts.
 */
export function olsTrend(ys: readonly (number | null)[], confidence = 0.95): OlsTrend | null {
  const { t: xs, y: vs } = present(ys);
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
  const t = slopeSe === 0 ? (slope === 0 ? 0 : Math.sign(slope) * Infinity) : slope / slopeSe;
  return { n, slope, slopeSe, t, rising: t > tCrit, falling: t < -tCrit };
}

function present(xs: readonly (number | null)[]): { t: number[]; y: number[] } {
  const t: number[] = [];
  const y: number[] = [];
  xs.forEach((v, i) => {
    if (v !== null && Number.isFinite(v)) {
      t.push(i);
      y.push(v);
    }
  });
  return { t, y };
}

/**
 * S = Σ_{i<j} sign(y_j − y_i) in O(n log n) (Knight 1966): a merge sort that, as it merges
 * two sorted runs, counts for each value of the later run the values of the earlier one
 * below it (+1 each) and above it (−1 each); ties count 0. The same integer as the pairs
 * summed one by one (y_j − y_i of finite numbers is 0 exactly when they are equal).
 *
 * - Knight, W. R. (1966). A computer method for calculating Kendall's tau with ungrouped
 *   data. JASA 61, 436–439.
 */
function kendallS(y: readonly number[]): number {
  const n = y.length;
  let a = Float64Array.from(y);
  let b = new Float64Array(n);
  let s = 0;
  for (let width = 1; width < n; width *= 2) {
    for (let lo = 0; lo < n; lo += 2 * width) {
      const mid = Math.min(lo + width, n);
      const hi = Math.min(lo + 2 * width, n);
      // Earlier run a[lo, mid): `below` of its values are < the later run's current one, `upTo` ≤ it.
      let below = lo;
      let upTo = lo;
      let i = lo;
      let k = lo;
      for (let j = mid; j < hi; j++) {
        const v = a[j]!;
        while (below < mid && a[below]! < v) below++;
        if (upTo < below) upTo = below;
        while (upTo < mid && a[upTo]! <= v) upTo++;
        s += below - lo - (mid - upTo);
        while (i < mid && a[i]! <= v) b[k++] = a[i++]!;
        b[k++] = v;
      }
      while (i < mid) b[k++] = a[i++]!;
    }
    [a, b] = [b, a];
  }
  return s;
}

/** Var(S) under independence with the correction for ties (Kendall 1975). */
function tieCorrectedVariance(y: readonly number[]): number {
  const n = y.length;
  const counts = new Map<number, number>();
  for (const v of y) counts.set(v, (counts.get(v) ?? 0) + 1);
  let ties = 0;
  for (const c of counts.values()) ties += c * (c - 1) * (2 * c + 5);
  return (n * (n - 1) * (2 * n + 5) - ties) / 18;
}

/** (y_j − y_i)/(t_j − t_i) for every i < j. */
function pairwiseSlopes(t: readonly number[], y: readonly number[]): Float64Array {
  const n = y.length;
  const out = new Float64Array((n * (n - 1)) / 2);
  let k = 0;
  for (let i = 0; i < n - 1; i++)
    for (let j = i + 1; j < n; j++) out[k++] = (y[j]! - y[i]!) / (t[j]! - t[i]!);
  return out;
}

/** The pairwise slopes, for their median and interval bounds (selected, not sorted). */
function slopeOrder(t: readonly number[], y: readonly number[]): OrderStatistics {
  return new OrderStatistics(pairwiseSlopes(t, y));
}

/** The median of the values, as sortedMedian of them sorted. */
function medianOf(s: OrderStatistics): number {
  const m = s.length >> 1;
  return s.length % 2 ? s.at(m) : (s.at(m - 1) + s.at(m)) / 2;
}

function median(xs: Float64Array): number {
  return sortedMedian(xs.slice().sort());
}

function sortedMedian(s: Float64Array): number {
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Ranks 1..n, ties given their average rank. */
function rank(y: readonly number[]): number[] {
  const idx = y.map((_, i) => i).sort((a, b) => y[a]! - y[b]!);
  const r = new Array<number>(y.length);
  for (let i = 0; i < idx.length;) {
    let j = i;
    while (j + 1 < idx.length && y[idx[j + 1]!] === y[idx[i]!]) j++;
    for (let k = i; k <= j; k++) r[idx[k]!] = (i + j) / 2 + 1;
    i = j + 1;
  }
  return r;
}

/** Sample autocorrelations r_0..r_maxLag (demeaned, divided by the lag-0 sum, as statsmodels' acf). */
function acf(x: readonly number[], maxLag: number): number[] {
  const n = x.length;
  const m = x.reduce((a, b) => a + b, 0) / n;
  const d = x.map((v) => v - m);
  let c0 = 0;
  for (const v of d) c0 += v * v;
  const r = [1];
  for (let k = 1; k <= maxLag; k++) {
    let c = 0;
    for (let i = 0; i + k < n; i++) c += d[i]! * d[i + k]!;
    r.push(c0 === 0 ? 0 : c / c0);
  }
  return r;
}

function normalCdf(z: number): number {
  return jstat.jStat.normal.cdf(z, 0, 1);
}

function normalInv(p: number): number {
  return jstat.jStat.normal.inv(p, 0, 1);
}
