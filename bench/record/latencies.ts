import type { Attempt, AttemptResult, Origin } from '../outcome.js';
import type { BucketSeries } from './buckets.js';
import { setAt } from './buckets.js';
import {
  createLatencyHistogram,
  percentilesUs,
  recordUs,
  usOf,
  summarize,
  type LatencyHistogram,
  type LatencySummary,
} from './histogram.js';

/** The percentiles each bucket's response times give the series. */
const BUCKET_PERCENTILES = [50, 99] as const;

/** A named interval of the run (warm-up, baseline, trigger, after trigger), ms since run start. */
export interface RecordWindow {
  readonly name: string;
  readonly startMs: number;
  readonly endMs: number;
}

export interface WindowLatency {
  readonly response: LatencySummary;
  readonly service: LatencySummary;
}

/**
 * The run's latency histograms: response and service time over the whole run and per
 * window, the generator's schedule lag, the client's connection waits, and the current
 * bucket's response times (its p50/p99/max go into the series when it closes).
 */
export class Latencies {
  private readonly windows: {
    readonly def: RecordWindow;
    readonly lat: { readonly response: LatencyHistogram; readonly service: LatencyHistogram };
  }[];
  private readonly overall = { response: createLatencyHistogram(), service: createLatencyHistogram() };
  private readonly lag = createLatencyHistogram();
  private readonly wait = createLatencyHistogram();
  /** The bucket being filled, and its response times. */
  private curBucket = 0;
  private readonly curHist = createLatencyHistogram();

  constructor(
    windows: readonly RecordWindow[],
    private readonly s: BucketSeries,
    /** Sees each bucket's response-time histogram (µs) before it is reset. */
    private readonly onBucketClosed: ((bucket: number, response: LatencyHistogram) => void) | undefined,
  ) {
    this.windows = windows.map((def) => ({
      def,
      lat: { response: createLatencyHistogram(), service: createLatencyHistogram() },
    }));
  }

  // The hot path's methods take the attempt and its result, not figures computed from
  // them, and hand the histograms whole microseconds: a fractional number passed to a
  // call the JIT does not inline is boxed (an allocation a call); a small integer is not.

  /** A successful attempt's service time (completion − actual send), by its end. */
  service(r: AttemptResult): void {
    const us = usOf(r.endMs - r.sentMs);
    recordUs(this.overall.service, us);
    for (const w of this.windows)
      if (r.endMs >= w.def.startMs && r.endMs < w.def.endMs) recordUs(w.lat.service, us);
  }

  /** A successful origin's response time (completion − intended time), ending in bucket `b`. */
  response(o: Origin, r: AttemptResult, b: number): void {
    const us = usOf(r.endMs - o.intendedMs);
    recordUs(this.overall.response, us);
    for (const w of this.windows)
      if (r.endMs >= w.def.startMs && r.endMs < w.def.endMs) recordUs(w.lat.response, us);
    if (b > this.curBucket) this.rotate(b);
    if (b === this.curBucket) recordUs(this.curHist, us);
  }

  /**
   * A first attempt's schedule lag: the generator's own, from the intended time to when
   * it handed the attempt to the client (a wait for a connection inside the client is
   * clientWait's). Returns whether it was over `lateMs`.
   */
  scheduleLag(a: Attempt, r: AttemptResult, lateMs: number): boolean {
    const lagMs = r.sentMs - (r.clientWaitMs ?? 0) - a.origin.intendedMs;
    recordUs(this.lag, usOf(lagMs > 0 ? lagMs : 0));
    return lagMs > lateMs;
  }

  /** How long the attempt waited inside the client for a connection (only when it did). */
  clientWait(r: AttemptResult): void {
    if (r.clientWaitMs) recordUs(this.wait, usOf(r.clientWaitMs));
  }

  /** Closes per-bucket figures up to (not including) bucket `b`. */
  rotate(b: number): void {
    const h = this.curHist;
    const i = this.curBucket;
    if (h.totalCount > 0) {
      this.onBucketClosed?.(i, h);
      const [p50, p99] = percentilesUs(h, BUCKET_PERCENTILES);
      setAt(this.s.responseP50, i, p50! / 1000);
      setAt(this.s.responseP99, i, p99! / 1000);
      setAt(this.s.responseMax, i, h.maxValue / 1000);
      h.reset();
    }
    this.curBucket = b;
  }

  /** Bucket `i`'s p99 response time so far (null: no success in it, or not begun). */
  p99Ms(i: number): number | null {
    const h = this.curHist;
    return i === this.curBucket
      ? h.totalCount > 0
        ? h.getValueAtPercentile(99) / 1000
        : null
      : i < this.curBucket
        ? (this.s.responseP99[i] ?? null)
        : null;
  }

  /** The summaries at the run's end. */
  summaries(): {
    windows: Record<string, WindowLatency>;
    overall: WindowLatency;
    scheduleLag: LatencySummary;
    clientWait: LatencySummary;
  } {
    const windows: Record<string, WindowLatency> = {};
    for (const w of this.windows)
      windows[w.def.name] = { response: summarize(w.lat.response), service: summarize(w.lat.service) };
    return {
      windows,
      overall: { response: summarize(this.overall.response), service: summarize(this.overall.service) },
      scheduleLag: summarize(this.lag),
      clientWait: summarize(this.wait),
    };
  }
}
