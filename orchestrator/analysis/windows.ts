import type { LatencySummary } from '../../bench/record/histogram.js';
import type { Recorded } from '../../bench/record/Recorder.js';
import type { ServerSeries } from '../scrape/scraper.js';
import type { Span } from '../spec/plan.js';
import { round } from '../../foundation/round.js';
import { emptyLatency } from './latency.js';
import { bucketRange, serverAmplification, sumSpan } from './rates.js';

export interface WindowSummary {
  readonly seconds: number;
  readonly offeredPerS: number | null;
  readonly goodputPerS: number | null;
  readonly amplification: number | null;
  readonly amplificationServer: number | null;
  readonly latencyMs: Omit<LatencySummary, 'p999'>;
}

/** One window of the run (baseline, after the trigger): its rates and the latency the Recorder kept for it. */
export function windowSummary(
  r: Recorded,
  server: ServerSeries | null,
  span: Span,
  name: string,
): WindowSummary {
  const [a, b] = bucketRange(span, r.bucketMs);
  const seconds = ((b - a) * r.bucketMs) / 1000;
  const offered = sumSpan(r.series.offered, span, r.bucketMs);
  const attempts = sumSpan(r.series.attempts, span, r.bucketMs);
  const goodput = sumSpan(r.series.goodput, span, r.bucketMs);
  const serverAmp = server ? serverAmplification(server, r.series.offered, a, b) : null;
  const lat = r.windows[name]?.response ?? emptyLatency();
  const { p999: _drop, ...latencyMs } = lat;
  return {
    seconds,
    offeredPerS: seconds > 0 ? round(offered / seconds, 3) : null,
    goodputPerS: seconds > 0 ? round(goodput / seconds, 3) : null,
    amplification: offered > 0 ? round(attempts / offered, 3) : null,
    amplificationServer: serverAmp === null ? null : round(serverAmp, 3),
    latencyMs,
  };
}
