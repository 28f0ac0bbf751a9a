import type { Recorded } from '../../bench/record/Recorder.js';
import { FAILURE_KINDS } from '../../bench/outcome.js';
import type { ServerSeries } from '../scrape/scraper.js';
import type { RunPlan, Span } from '../spec/plan.js';
import { apiReplicaCount } from '../spec/sections/lab.js';
import type { SustainingFigures } from './outcome.js';
import { bucketRange, serverAmplification } from './rates.js';
import { capacityLossFigures } from './capacityLoss.js';

/** The figures that name a sustaining effect, over a span (the tail of the observation). */
export function sustainingFigures(
  plan: RunPlan,
  r: Recorded,
  server: ServerSeries | null,
  span: Span,
): SustainingFigures {
  const [a, b] = bucketRange(span, r.bucketMs);
  const seconds = ((b - a) * r.bucketMs) / 1000;
  const sum = (arr: readonly (number | null)[] | undefined, x = a, y = b): number | null => {
    if (!arr) return null;
    let v = 0;
    let any = false;
    for (let i = x; i < y; i++)
      if (arr[i] !== null && arr[i] !== undefined) {
        v += arr[i]!;
        any = true;
      }
    return any ? v : null;
  };
  const offered = sum(r.series.offered) ?? 0;
  const attempts = sum(r.series.attempts) ?? 0;
  const good = sum(r.series.goodput) ?? 0;
  const failed = FAILURE_KINDS.reduce((x, k) => x + (sum(r.series.failures[k]) ?? 0), 0);
  const received = server ? sum(server.received) : null;
  const hitRatio = (x: number, y: number): number | null => {
    const h = sum(server?.extra?.['cache_hits'], x, y);
    const m = sum(server?.extra?.['cache_misses'], x, y);
    return h !== null && m !== null && h + m > 0 ? h / (h + m) : null;
  };
  const [ba, bb] = bucketRange(plan.phases.baseline, r.bucketMs);
  const serverAmp = server ? serverAmplification(server, r.series.offered, a, b) : null;
  // Seconds spent on error paths, every kind (error_path_seconds_<kind> columns).
  const errorPathCols = Object.entries(server?.extra ?? {}).filter(([col]) =>
    col.startsWith('error_path_seconds_'),
  );
  const errorPathS = errorPathCols.reduce((x, [, arr]) => x + (sum(arr) ?? 0), 0);
  // Every replica's workers (the error-path columns are summed over the replicas).
  const lab = plan.experiment.lab;
  const workerS = lab ? apiReplicaCount(lab.api) * lab.api.workers * seconds : 0;
  return {
    capacityPerS: plan.capacity.usedPerS,
    receivedPerS: received === null ? null : received / seconds,
    attemptsPerS: attempts / seconds,
    amplification: offered > 0 ? attempts / offered : null,
    amplificationServer: serverAmp,
    cacheHitRatio: hitRatio(a, b),
    baselineCacheHitRatio: hitRatio(ba, bb),
    errorRatio: good + failed > 0 ? failed / (good + failed) : null,
    errorPathShare: errorPathCols.length > 0 && workerS > 0 ? errorPathS / workerS : null,
    ...capacityLossFigures(plan, server, a, b, r.bucketMs / 1000),
  };
}
