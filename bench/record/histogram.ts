import type * as hdr from 'hdr-histogram-js';
// The 32-bit histogram class alone: the package's root also loads its WebAssembly build,
// pako and its log reader and writer, 65 ms of loading that no run uses. A CommonJS module:
// its class is the `default` of what it exports.
import Int32Module from 'hdr-histogram-js/dist/Int32Histogram.js';

/**
 * Latency histograms: HdrHistogram in microseconds, 3 significant digits, up to one hour.
 * Its percentile is nearest-rank (rank = ceil(p/100 * n)) at the histogram's resolution.
 */
export type LatencyHistogram = hdr.Histogram;

/**
 * What `hdr.build({ bitBucketSize: 32, lowestDiscernibleValue: 1, highestTrackableValue:
 * 3_600_000_000, numberOfSignificantValueDigits: 3, useWebAssembly: false })` makes, without
 * loading the builder: an Int32Histogram, auto-resizing as the builder's default says.
 */
export function createLatencyHistogram(): LatencyHistogram {
  const h = new Int32Module.default(1, 3_600_000_000, 3);
  h.autoResize = true;
  return h;
}

/** A latency given in milliseconds as the whole microseconds a histogram records (clamped into its range). */
export function usOf(ms: number): number {
  const us = Math.round(ms * 1000);
  return us < 1 ? 1 : us > 3_600_000_000 ? 3_600_000_000 : us;
}

/** Records a latency given in milliseconds (clamped into the trackable range). */
export function recordMs(h: LatencyHistogram, ms: number): void {
  recordUs(h, usOf(ms));
}

/** The library's own steps of recordValue, reached past its index computation. */
interface RecordSteps {
  readonly countsArrayLength: number;
  readonly unitMagnitude: number;
  readonly subBucketHalfCountMagnitude: number;
  incrementCountAtIndex(index: number): void;
  updateMinAndMax(value: number): void;
  incrementTotalCount(): void;
}

/**
 * `h.recordValue(us)` for a whole number of microseconds in [1, 2^32): the same counts,
 * min, max and total, with the bucket found by counting leading zeros. The library's
 * recordValue computes it with Math.log2, Math.pow and a division on every call (a tenth
 * of a simulated run's time went there); anything out of this range goes through it.
 */
export function recordUs(h: LatencyHistogram, us: number): void {
  const s = h as unknown as RecordSteps;
  if (s.unitMagnitude !== 0 || !(us >= 1 && us <= 0xffffffff) || us !== Math.floor(us))
    return h.recordValue(us);
  const m = s.subBucketHalfCountMagnitude;
  // getBucketIndex: max(floor(log2(us)) - m, 0); getSubBucketIndex: floor(us / 2^bucket).
  let bucket = 31 - Math.clz32(us) - m;
  if (bucket < 0) bucket = 0;
  const index = (bucket << m) + (us >>> bucket);
  if (index >= s.countsArrayLength) return h.recordValue(us);
  s.incrementCountAtIndex(index);
  s.updateMinAndMax(us);
  s.incrementTotalCount();
}

/** A latency distribution as reported: always with its sample count. Null figures mean no samples. */
export interface LatencySummary {
  readonly samples: number;
  readonly mean: number | null;
  readonly p50: number | null;
  readonly p90: number | null;
  readonly p99: number | null;
  readonly p999: number | null;
  readonly max: number | null;
}

/** The library's fields a summary reads in place (its counts array is not public API). */
interface Layout {
  readonly countsArrayLength: number;
  readonly unitMagnitude: number;
  readonly subBucketHalfCountMagnitude: number;
  readonly _counts: ArrayLike<number>;
  getCountAtIndex(index: number): number;
  valueFromIndex(index: number): number;
  lowestEquivalentValue(value: number): number;
  highestEquivalentValue(value: number): number;
  medianEquivalentValue(value: number): number;
}

/**
 * medianEquivalentValue(highestEquivalentValue(valueFromIndex(i))), the value the library's
 * mean gives bucket `i`, in closed form for a histogram whose unit is 1 (unitMagnitude 0),
 * with 2^m sub-buckets a half: bucket b ≥ 1 holds [s·2^b, (s+1)·2^b) for s in [2^m, 2^(m+1)),
 * whose median equivalent value is s·2^b + 2^(b−1); bucket 0 holds single values. The
 * library reaches the same integers through Math.log2 and Math.pow, a dozen calls a bucket.
 */
export function bucketMedianUs(i: number, m: number): number {
  const half = 1 << m;
  const b = (i >>> m) - 1;
  if (b < 0) return i;
  const v = ((i & (half - 1)) + half) * POW2[b]!;
  return b === 0 ? v : v + POW2[b - 1]!;
}

/** 2^k, exactly, for every bucket a count array of 2^31 entries can have. */
const POW2 = Float64Array.from({ length: 64 }, (_, k) => 2 ** k);

/**
 * `h.mean`, the same float: the same products summed in the same order (each recorded
 * bucket's median equivalent value times its count, by index), over the counts array read in
 * place. The getter's iterator computes two bucket values and fills an object for every
 * bucket, recorded or not, and each value takes a dozen Math.log2 and Math.pow calls: 45 to
 * 140 ms a summary.
 */
export function meanUs(h: LatencyHistogram): number {
  const n = h.totalCount;
  if (n === 0) return 0;
  const s = h as unknown as Layout;
  const closed = s.unitMagnitude === 0;
  const m = s.subBucketHalfCountMagnitude;
  const counts = s._counts;
  let total = 0;
  for (let i = 0, seen = 0, len = s.countsArrayLength; seen < n && i < len; i++) {
    const c = counts[i]!;
    if (c === 0) continue;
    seen += c;
    const median = closed
      ? bucketMedianUs(i, m)
      : s.medianEquivalentValue(s.highestEquivalentValue(s.valueFromIndex(i)));
    total += median * c;
  }
  return total / n;
}

/** hdr-histogram-js's ulp (dist/ulp.js), which getValueAtPercentile rounds its count with. */
function ulp(x: number): number {
  return Math.pow(2, Math.floor(Math.log2(x)) - 52);
}

/**
 * `ps.map((p) => h.getValueAtPercentile(p))`, the same values, in one pass over the counts
 * (`ps` ascending): each percentile's count rounded as the library rounds it, the first index
 * whose running total reaches it, and that bucket's value as the library gives it.
 */
export function percentilesUs(h: LatencyHistogram, ps: readonly number[]): number[] {
  const s = h as unknown as Layout;
  const n = h.totalCount;
  const out = ps.map(() => 0);
  const targets = ps.map((p) => {
    const fp = (Math.min(p, 100) / 100.0) * n;
    return Math.max(Math.ceil(fp - ulp(fp)), 1);
  });
  const counts = s._counts;
  let k = 0;
  let total = 0;
  for (let i = 0, len = s.countsArrayLength; i < len && k < ps.length; i++) {
    total += counts[i]!;
    while (k < ps.length && total >= targets[k]!) {
      const v = s.valueFromIndex(i);
      out[k] = ps[k] === 0.0 ? s.lowestEquivalentValue(v) : s.highestEquivalentValue(v);
      k++;
    }
  }
  return out;
}

const SUMMARY_PERCENTILES = [50, 90, 99, 99.9] as const;

export function summarize(h: LatencyHistogram): LatencySummary {
  const n = h.totalCount;
  if (n === 0) return { samples: 0, mean: null, p50: null, p90: null, p99: null, p999: null, max: null };
  const ms = (us: number): number => Math.round(us) / 1000;
  const [p50, p90, p99, p999] = percentilesUs(h, SUMMARY_PERCENTILES);
  return {
    samples: n,
    mean: ms(meanUs(h)),
    p50: ms(p50!),
    p90: ms(p90!),
    p99: ms(p99!),
    p999: ms(p999!),
    max: ms(h.maxValue),
  };
}
