import type { LatencySummary } from '../../bench/record/histogram.js';
import type { WindowPercentile } from '../../bench/record/successLog.js';
import type { HypothesisMetric } from '../spec/sections/hypothesis.js';
import { parseThreshold } from '../spec/threshold.js';
import { round } from '../../foundation/round.js';

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
