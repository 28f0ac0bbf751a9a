import { FAILURE_KINDS } from '../../bench/outcome.js';
import type { Recorded } from '../../bench/record/Recorder.js';
import type { ServerSeries } from '../scrape/scraper.js';
import type { RunPlan } from '../spec/plan.js';
import { serverAmplification } from '../analysis/summary.js';
import { round } from '../../foundation/round.js';
import { seriesCsv, type SeriesCell, type SeriesTable } from './timeseriesFiles.js';

/** The phase a bucket starts in. */
function phaseAt(plan: RunPlan, ms: number): string {
  const p = plan.phases;
  if (ms < p.warmup.endMs) return 'warmup';
  if (ms < p.baseline.endMs) return 'baseline';
  if (ms < p.trigger.endMs) return 'trigger';
  if (ms < p.observe.endMs) return 'observe';
  return 'drain';
}

/**
 * A number as timeseries.csv writes it: rounded to 3 decimals; empty when not measured.
 * The status line prints its per-second figures with it, so they read the same.
 */
export function csvNumber(v: number | null | undefined): string {
  return v === null || v === undefined ? '' : String(round(v, 3));
}

/**
 * timeseries.csv: one row per bucket (second), one column per series. Empty cells
 * mean "not measured" (no success in that second, or no scrape answered), never zero.
 */
export function timeseriesCsv(...args: Parameters<typeof timeseriesTable>): string {
  return seriesCsv(timeseriesTable(...args));
}

/**
 * The per-second series (timeseries.csv's columns and rows). Numbers are as the csv
 * writes them: measured figures rounded to 3 decimals (csvNumber), counts as they are.
 */
export function timeseriesTable(
  plan: RunPlan,
  r: Recorded,
  server: ServerSeries | null,
  /** Per-process resource columns (proc_<component>_cpu, _rss_bytes, _anon_bytes). */
  procs?: Record<string, (number | null)[]>,
  /** The `phase` column (default: the run's phases; a step test names its steps). */
  phaseOf: (ms: number) => string = (ms) => phaseAt(plan, ms),
): SeriesTable {
  const s = r.series;
  const cols = [
    't_s',
    'phase',
    'offered',
    'attempts',
    'goodput',
    'amplification_client',
    'amplification_server',
    ...FAILURE_KINDS.map((k) => `failed_${k.replace(/-/g, '_')}`),
    'late_sends',
    'in_flight',
    'client_waits',
    'response_p50_ms',
    'response_p99_ms',
    'response_max_ms',
    'server_received',
    'server_completed',
    'server_wasted',
    'server_queue_depth',
    'server_busy_workers',
    'server_cpu_seconds',
    'server_rss_bytes',
    // Client policies (empty when the client does not use that policy):
    'hedges',
    'cancelled_attempts',
    'retries_denied_budget',
    'rejected_breaker',
    'rejected_throttle',
    // The breaker state series: the fraction of the second the clients' breakers were
    // open / half-open, averaged over the clients (0..1), and the transitions to open.
    'breaker_open',
    'breaker_half_open',
    'breaker_opens',
  ];
  const extraCols = Object.keys(server?.extra ?? {}).sort();
  const procCols = Object.keys(procs ?? {}).sort();
  cols.push(...extraCols, ...procCols);
  const p = r.policies;
  const cell = (v: number | null | undefined): number | null =>
    v === null || v === undefined ? null : round(v, 3);
  const when = (on: boolean, v: number | undefined): number | null => (on ? cell(v ?? 0) : null);
  const rows: SeriesCell[][] = [];
  for (let i = 0; i < r.buckets; i++) {
    const offered = s.offered[i] ?? 0;
    const received = server?.received[i] ?? null;
    const serverAmp = server ? serverAmplification(server, s.offered, i, i + 1) : null;
    rows.push([
      (i * r.bucketMs) / 1000,
      phaseOf(i * r.bucketMs),
      offered,
      s.attempts[i] ?? 0,
      s.goodput[i] ?? 0,
      cell(offered > 0 ? (s.attempts[i] ?? 0) / offered : null),
      cell(serverAmp),
      ...FAILURE_KINDS.map((k) => s.failures[k][i] ?? 0),
      s.lateSends[i] ?? 0,
      s.inFlight[i] ?? 0,
      s.clientWaits[i] ?? 0,
      cell(s.responseP50[i]),
      cell(s.responseP99[i]),
      cell(s.responseMax[i]),
      cell(received),
      cell(server?.completed[i]),
      cell(server?.wasted[i]),
      cell(server?.queueDepth[i]),
      cell(server?.busyWorkers[i]),
      cell(server?.cpuSeconds[i]),
      cell(server?.rssBytes[i]),
      when(p.hedge, s.hedges[i]),
      cell(s.cancelledAttempts[i] ?? 0),
      when(p.budget, s.retriesDeniedBudget[i]),
      when(p.breaker, s.rejectedBreaker[i]),
      when(p.throttle, s.rejectedThrottle[i]),
      when(p.breaker, s.breakerOpen[i]),
      when(p.breaker, s.breakerHalfOpen[i]),
      when(p.breaker, s.breakerOpens[i]),
      ...extraCols.map((c) => cell(server?.extra?.[c]?.[i])),
      ...procCols.map((c) => cell(procs?.[c]?.[i])),
    ]);
  }
  return { columns: cols, rows };
}
