import type { Recorded } from '../../bench/record/Recorder.js';
import { FAILURE_KINDS } from '../../bench/outcome.js';
import type { ServerSeries } from '../scrape/scraper.js';
import type { RunPlan, Span } from '../spec/plan.js';
import { apiReplicaCount } from '../spec/sections/lab.js';
import {
  DEFAULT_GOODPUT,
  judge,
  judgeGrowth,
  type HypothesisResult,
  type HypothesisWindow,
} from './hypothesis.js';
import type { RecoveryResult } from './recovery.js';

/** The default steady state in words (the report names it; docs/hypotheses.md states it). */
export const DEFAULT_STEADY_STATE = 'goodput ≥ 95% of offered, backlog and p99 not growing over the baseline';
/** The backlog "grows" by at least max(workers × replicas, this share of a second of capacity) requests. */
export const DEFAULT_BACKLOG_CAPACITY_SHARE = 0.1;
/** The p99 "grows" by at least max(DEFAULT_P99_GROWTH_MIN_MS, this share of the window's median per-second p99). */
export const DEFAULT_P99_GROWTH_SHARE = 0.5;
export const DEFAULT_P99_GROWTH_MIN_MS = 1;

/**
 * The default steady state (DESIGN.md §2, validity check 2), judged where an experiment
 * declares no hypothesis: goodput ≥ 95% of offered, the backlog (queue depth, where
 * scraped) not growing, and the per-second p99 not growing, over each window (the
 * baseline, and after recovery like a declared hypothesis). "Not growing" is the robust
 * trend test with a tolerance noise cannot trip (hypothesis.ts, judgeGrowth):
 *
 * - backlog: a growth over the window of at least max(workers × replicas, 10% of a
 *   second of capacity) requests — a queue that adds 100 ms of waiting at full capacity;
 * - p99: a growth of at least max(1 ms, 50% of the window's median per-second p99).
 *
 * Every entry is marked `default: true` and its threshold says "default".
 */
export function judgeDefaultSteadyState(
  plan: RunPlan,
  recorded: Recorded,
  server: ServerSeries | null,
  windows: readonly { name: HypothesisWindow; span: Span | null; note?: string }[],
): HypothesisResult[] {
  const s = recorded.series;
  const bucketMs = recorded.bucketMs;
  const api = plan.experiment.lab?.api;
  // Your own system: its workers are not declared (0), and its capacity is known once calibrated.
  const workers = api ? apiReplicaCount(api) * api.workers : 0;
  const capacityPerS = plan.capacity.usedPerS ?? 0;
  const failureKinds = FAILURE_KINDS.filter((k) => k !== 'abandoned');
  const out: HypothesisResult[] = [];
  for (const w of windows) {
    const [a, b] = w.span
      ? [Math.ceil(w.span.startMs / bucketMs - 1e-9), Math.ceil(w.span.endMs / bucketMs - 1e-9)]
      : [0, 0];
    const slice = <T>(arr: readonly T[] | undefined): T[] => (arr ? arr.slice(a, b) : []);
    const sum = (arr: readonly number[]): number => slice(arr).reduce((x, v) => x + (v ?? 0), 0);
    const where = {
      span: w.span ? { startS: (a * bucketMs) / 1000, endS: (b * bucketMs) / 1000 } : null,
      ...(w.note ? { note: w.note } : {}),
    };
    const g = judge('goodput', DEFAULT_GOODPUT, w.name, {
      offered: sum(s.offered),
      goodput: sum(s.goodput),
      failed: failureKinds.reduce((x, k) => x + sum(s.failures[k]), 0),
      latencyMs: { samples: 0, mean: null, p50: null, p90: null, p99: null, p999: null, max: null },
    });
    out.push({ ...g, threshold: `${g.threshold} (default)`, default: true, ...where });
    if (server) {
      const share = DEFAULT_BACKLOG_CAPACITY_SHARE;
      const tolerance = Math.max(workers, share * capacityPerS);
      out.push({
        ...judgeGrowth({
          metric: 'backlog',
          window: w.name,
          perSecond: slice(server.queueDepth),
          tolerance,
          toleranceWhy: `max(workers × replicas = ${workers}, ${share * 100}% of a second of capacity = ${round1(share * capacityPerS)})`,
          unit: 'requests',
        }),
        ...where,
      });
    }
    const p99 = slice(s.responseP99);
    const level = median(p99.filter((v): v is number => v !== null));
    out.push({
      ...judgeGrowth({
        metric: 'p99',
        window: w.name,
        perSecond: p99,
        tolerance: Math.max(DEFAULT_P99_GROWTH_MIN_MS, DEFAULT_P99_GROWTH_SHARE * (level ?? 0)),
        toleranceWhy: `max(${DEFAULT_P99_GROWTH_MIN_MS} ms, ${DEFAULT_P99_GROWTH_SHARE * 100}% of the median per-second p99${level !== null ? ` = ${round1(DEFAULT_P99_GROWTH_SHARE * level)} ms` : ''})`,
        unit: 'ms',
      }),
      ...where,
    });
  }
  return out;
}

function median(xs: number[]): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((x, y) => x - y);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

function round1(x: number): number {
  return Math.round(x * 10) / 10;
}

/** The default steady state over the windows a declared hypothesis is judged in (summary.ts, judgeHypotheses). */
export function judgeDefaultFor(
  plan: RunPlan,
  recorded: Recorded,
  server: ServerSeries | null,
  recovery: RecoveryResult,
  endMs: number,
): HypothesisResult[] {
  return judgeDefaultSteadyState(plan, recorded, server, [
    { name: 'baseline', span: plan.phases.baseline },
    recovery.recoveredAtS !== null
      ? { name: 'afterRecovery', span: { startMs: recovery.recoveredAtS * 1000, endMs } }
      : { name: 'afterRecovery', span: null, note: `no recovery point: ${recovery.reason}` },
  ]);
}
