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

/** The library's steps its `mean` getter takes per bucket. */
interface MeanSteps {
  readonly countsArrayLength: number;
  getCountAtIndex(index: number): number;
  valueFromIndex(index: number): number;
  highestEquivalentValue(value: number): number;
  medianEquivalentValue(value: number): number;
}

/**
 * `h.mean`, the same float: the same products summed in the same order (each recorded
 * bucket's median equivalent value times its count, by index), over a count array read in
 * place. The getter's iterator computes two bucket values and fills an object for every
 * bucket, recorded or not: 45 to 140 ms a summary.
 */
export function meanUs(h: LatencyHistogram): number {
  const n = h.totalCount;
  if (n === 0) return 0;
  const s = h as unknown as MeanSteps;
  let total = 0;
  for (let i = 0, seen = 0, len = s.countsArrayLength; seen < n && i < len; i++) {
    const c = s.getCountAtIndex(i);
    if (c === 0) continue;
    seen += c;
    total += s.medianEquivalentValue(s.highestEquivalentValue(s.valueFromIndex(i))) * c;
  }
  return total / n;
}

export function summarize(h: LatencyHistogram): LatencySummary {
  const n = h.totalCount;
  if (n === 0) return { samples: 0, mean: null, p50: null, p90: null, p99: null, p999: null, max: null };
  const ms = (us: number): number => Math.round(us) / 1000;
  return {
    samples: n,
    mean: ms(meanUs(h)),
    p50: ms(h.getValueAtPercentile(50)),
    p90: ms(h.getValueAtPercentile(90)),
    p99: ms(h.getValueAtPercentile(99)),
    p999: ms(h.getValueAtPercentile(99.9)),
    max: ms(h.maxValue),
  };
}
