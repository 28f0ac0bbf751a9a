import * as hdr from 'hdr-histogram-js';

/**
 * Latency histograms: HdrHistogram in microseconds, 3 significant digits, up to one hour.
 * Its percentile is nearest-rank (rank = ceil(p/100 * n)) at the histogram's resolution.
 */
export type LatencyHistogram = hdr.Histogram;

export function createLatencyHistogram(): LatencyHistogram {
  return hdr.build({
    bitBucketSize: 32,
    lowestDiscernibleValue: 1,
    highestTrackableValue: 3_600_000_000,
    numberOfSignificantValueDigits: 3,
    useWebAssembly: false,
  });
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

export function summarize(h: LatencyHistogram): LatencySummary {
  const n = h.totalCount;
  if (n === 0) return { samples: 0, mean: null, p50: null, p90: null, p99: null, p999: null, max: null };
  const ms = (us: number): number => Math.round(us) / 1000;
  return {
    samples: n,
    mean: ms(h.mean),
    p50: ms(h.getValueAtPercentile(50)),
    p90: ms(h.getValueAtPercentile(90)),
    p99: ms(h.getValueAtPercentile(99)),
    p999: ms(h.getValueAtPercentile(99.9)),
    max: ms(h.maxValue),
  };
}
