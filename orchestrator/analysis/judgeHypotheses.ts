import type { Recorded } from '../../bench/record/Recorder.js';
import { FAILURE_KINDS } from '../../bench/outcome.js';
import type { RunPlan, Span } from '../spec/plan.js';
import { HYPOTHESIS_METRICS, type Experiment } from '../spec/schema.js';
import type { Thresholds } from '../spec/sections/hypothesis.js';
import { round } from '../../foundation/round.js';
import { judge, type HypothesisResult, type HypothesisWindow, type WindowFigures } from './hypothesis.js';
import type { RecoveryResult } from './recovery.js';
import { emptyLatency } from './latency.js';
import { bucketRange } from './rates.js';

/** Whether the experiment declares any threshold (global or per class). */
export function hasHypothesis(h: Experiment['hypothesis']): boolean {
  return (
    HYPOTHESIS_METRICS.some((m) => h[m] !== undefined) ||
    Object.values(h.classes ?? {}).some((c) => HYPOTHESIS_METRICS.some((m) => c[m] !== undefined))
  );
}

/**
 * Every threshold judged in each window: the global ones on every origin, then each
 * class's on that class's origins alone, first in the baseline and then after recovery
 * (from the recovery point to the end of the observation). When the run did not
 * recover there is no after-recovery window: those verdicts are unmeasured, never a
 * pass. The same entries in the same order for every run, so repetitions line up.
 *
 * Counts (offered, goodput, failures) are whole buckets, as the window tables; latency
 * is the successes that completed in the same buckets.
 */
export function judgeHypotheses(
  plan: RunPlan,
  recorded: Recorded,
  recovery: RecoveryResult,
  endMs: number,
): HypothesisResult[] {
  const h = plan.experiment.hypothesis;
  const s = recorded.series;
  const bucketMs = recorded.bucketMs;
  const sets: { cls?: string; thresholds: Thresholds }[] = [
    { thresholds: h },
    ...Object.entries(h.classes ?? {}).map(([cls, thresholds]) => ({ cls, thresholds })),
  ];
  const windows: { name: HypothesisWindow; span: Span | null; note?: string }[] = [
    { name: 'baseline', span: plan.phases.baseline },
    recovery.recoveredAtS !== null
      ? { name: 'afterRecovery', span: { startMs: recovery.recoveredAtS * 1000, endMs } }
      : { name: 'afterRecovery', span: null, note: `no recovery point: ${recovery.reason}` },
  ];
  const none: WindowFigures = { offered: 0, goodput: 0, failed: 0, latencyMs: emptyLatency() };
  // An origin the user gave up on purpose (a cancelled stream, patience run out) is not an error.
  const failureKinds = FAILURE_KINDS.filter((k) => k !== 'abandoned');
  const figures = (span: Span | null, name: HypothesisWindow, cls: string | undefined): WindowFigures => {
    if (span === null) return none;
    const [a, b] = bucketRange(span, bucketMs);
    const sum = (arr: readonly number[] | undefined): number => {
      let x = 0;
      for (let i = a; i < b; i++) x += arr?.[i] ?? 0;
      return x;
    };
    const log = recorded.successes;
    const none95 = { samples: 0, value: null };
    // p95 and TTFT p95 come from the success log (the Recorder's windows keep no p95, and no TTFT).
    const p95 = (of: 'response' | 'ttft', idx?: number) =>
      log?.percentile(of, 95, a * bucketMs, b * bucketMs, idx) ?? none95;
    if (cls === undefined)
      return {
        offered: sum(s.offered),
        goodput: sum(s.goodput),
        failed: failureKinds.reduce((x, k) => x + sum(s.failures[k]), 0),
        // The baseline is a window the Recorder kept whole; the others come from the success log.
        latencyMs:
          name === 'baseline'
            ? (recorded.windows['baseline']?.response ?? emptyLatency())
            : (log?.latency(a * bucketMs, b * bucketMs) ?? emptyLatency()),
        p95Ms: p95('response'),
        ttftP95Ms: p95('ttft'),
      };
    const c = recorded.classes?.[cls];
    const idx = recorded.classIndex?.[cls];
    return {
      offered: sum(c?.offered),
      goodput: sum(c?.goodput),
      failed: sum(c?.failed),
      latencyMs: log && idx !== undefined ? log.latency(a * bucketMs, b * bucketMs, idx) : emptyLatency(),
      p95Ms: idx !== undefined ? p95('response', idx) : none95,
      ttftP95Ms: idx !== undefined ? p95('ttft', idx) : none95,
    };
  };
  const out: HypothesisResult[] = [];
  for (const w of windows)
    for (const set of sets) {
      const metrics = HYPOTHESIS_METRICS.filter((m) => set.thresholds[m] !== undefined);
      if (metrics.length === 0) continue;
      const f = figures(w.span, w.name, set.cls);
      for (const metric of metrics) {
        const r = judge(metric, set.thresholds[metric]!, w.name, f);
        out.push({
          ...r,
          ...(set.cls !== undefined ? { class: set.cls } : {}),
          span: w.span
            ? { startS: round(w.span.startMs / 1000, 3), endS: round(w.span.endMs / 1000, 3) }
            : null,
          ...(w.note ? { note: w.note } : {}),
        });
      }
    }
  return out;
}
