import type { LatencySummary } from '../../bench/record/histogram.js';
import type { WindowPercentile } from '../../bench/record/successLog.js';
import type { HypothesisMetric } from '../spec/sections/hypothesis.js';
import { parseThreshold } from '../spec/threshold.js';
import { round } from '../../foundation/round.js';
import { trendOf } from './trend.js';

/** A verdict: no samples is never a pass. */
export type Verdict = 'pass' | 'fail' | 'unmeasured';

/**
 * The windows a hypothesis is judged in: the baseline (the steady state before the
 * trigger), and after recovery (from the recovery point to the end of the observation),
 * so a system that "recovers" to a worse steady state does not pass.
 */
export type HypothesisWindow = 'baseline' | 'afterRecovery';

export interface HypothesisResult {
  readonly metric: string;
  readonly window: string;
  /** The request class (a load.mix name) for a per-class threshold; absent for the global ones. */
  readonly class?: string;
  /** The window's span (s since run start); null when there is none (the run did not recover). */
  readonly span?: { readonly startS: number; readonly endS: number } | null;
  /** Why the verdict is unmeasured, when it is not for want of samples alone. */
  readonly note?: string;
  /** Part of the default steady state (no hypothesis was declared). */
  readonly default?: true;
  readonly threshold: string;
  readonly value: number | null;
  readonly samples: number;
  readonly verdict: Verdict;
}

/** What a window measured, for judging thresholds. */
export interface WindowFigures {
  readonly offered: number;
  readonly goodput: number;
  /** Failed origins; an origin the user gave up on purpose (`abandoned`) is not one. */
  readonly failed: number;
  readonly latencyMs: LatencySummary;
  /** p95 of the same successes' response times (absent: no sample). */
  readonly p95Ms?: WindowPercentile;
  /** p95 of the client-side time to first token of the successful streamed origins. */
  readonly ttftP95Ms?: WindowPercentile;
}

/**
 * Judges one steady-state threshold on a window:
 *   goodput: ">= 95% offered"  (goodput / offered origins, samples = offered)
 *   p50|p90|p95|p99|p999|max: "<= 400ms" (successful response times, samples = successes)
 *   ttftP95: "<= 1500ms" (time to first token of successful streams, samples = those streams)
 *   errorRatio: "<= 1%"  (failed / (successes + failed); abandoned origins are neither)
 */
export function judge(
  metric: HypothesisMetric,
  threshold: string,
  window: string,
  w: WindowFigures,
): HypothesisResult {
  const base = { metric, window, threshold };
  const t = parseThreshold(metric, threshold);
  let value: number | null;
  let samples: number;
  if (metric === 'goodput') {
    samples = w.offered;
    value = w.offered > 0 ? w.goodput / w.offered : null;
  } else if (metric === 'errorRatio') {
    samples = w.goodput + w.failed;
    value = samples > 0 ? w.failed / samples : null;
  } else if (metric === 'p95' || metric === 'ttftP95') {
    const p = (metric === 'p95' ? w.p95Ms : w.ttftP95Ms) ?? { samples: 0, value: null };
    samples = p.samples;
    value = p.value;
  } else {
    samples = w.latencyMs.samples;
    value = w.latencyMs[metric] ?? null;
  }
  if (!t.ok || value === null || samples === 0) return { ...base, value, samples, verdict: 'unmeasured' };
  const { op, limit } = t.value;
  const ok =
    op === '<=' ? value <= limit : op === '>=' ? value >= limit : op === '<' ? value < limit : value > limit;
  return { ...base, value: round(value, 4), samples, verdict: ok ? 'pass' : 'fail' };
}

/**
 * The default steady state (DESIGN.md §2, validity check 2): where an experiment declares
 * no hypothesis, goodput ≥ 95% of offered, and the backlog and p99 not growing over the
 * window. Its entries carry `default: true` and "(default)" in their threshold.
 */
export const DEFAULT_GOODPUT = '>= 95% offered';

/** The per-second series a growth check reads over its window, and its tolerance. */
export interface GrowthInput {
  readonly metric: 'backlog' | 'p99';
  readonly window: string;
  /** One value per second of the window (null: not measured that second). */
  readonly perSecond: readonly (number | null)[];
  /** The least growth over the window that counts, in the metric's unit. */
  readonly tolerance: number;
  /** How the tolerance was reached, in words. */
  readonly toleranceWhy: string;
  readonly unit: string;
}

/** Fewer seconds than this give an unmeasured growth verdict (the trend test needs them). */
export const MIN_GROWTH_SECONDS = 10;

/**
 * "Not growing": fails only when the robust trend test (Mann–Kendall with the
 * autocorrelation correction, one-sided at 95%) finds an upward trend **and** the growth
 * it measures over the window (Sen slope × seconds) is at least the tolerance, so a
 * significant but tiny drift, or a wandering queue, does not fail it. Value = that
 * growth; samples = seconds measured.
 */
export function judgeGrowth(x: GrowthInput): HypothesisResult {
  const t = trendOf(x.perSecond);
  const samples = x.perSecond.filter((v) => v !== null).length;
  const threshold = `not growing (default: no upward trend at 95% with a growth of ${round(x.tolerance, 3)} ${x.unit} or more over the window; ${x.toleranceWhy})`;
  const base = { metric: `${x.metric} growth`, window: x.window, threshold, default: true as const };
  if (t === null || samples < MIN_GROWTH_SECONDS)
    return {
      ...base,
      value: null,
      samples,
      verdict: 'unmeasured',
      note: `${samples} s measured: the trend test needs ${MIN_GROWTH_SECONDS}`,
    };
  const growth = t.slope * x.perSecond.length;
  return {
    ...base,
    value: round(growth, 3),
    samples,
    verdict: t.rising && growth >= x.tolerance ? 'fail' : 'pass',
  };
}
