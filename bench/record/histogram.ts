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
  h.recordValue(usOf(ms));
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
