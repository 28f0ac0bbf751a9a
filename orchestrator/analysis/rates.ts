import type { Recorded } from '../../bench/record/Recorder.js';
import type { ServerSeries } from '../scrape/scraper.js';
import type { RunPlan, Span } from '../spec/plan.js';
import { expectedArrivalsIn } from '../spec/arrivals/index.js';
import type { PhaseRate } from './validity.js';

/** Rates over windows of a run: offered, achieved and server-side, all over whole buckets. */

/** Buckets whose start lies in the span (bucket-aligned: a window is whole buckets). */
export function bucketRange(span: Span, bucketMs: number): [number, number] {
  return [Math.ceil(span.startMs / bucketMs - 1e-9), Math.ceil(span.endMs / bucketMs - 1e-9)];
}

/** The sum of a per-bucket series over the span's whole buckets (a missing bucket counts 0). */
export function sumSpan(arr: readonly (number | null)[], span: Span, bucketMs: number): number {
  const [a, b] = bucketRange(span, bucketMs);
  let s = 0;
  for (let i = a; i < b; i++) s += arr[i] ?? 0;
  return s;
}

/**
 * Each phase's offered load as planned (expected arrivals of the open loop's plan) and as
 * achieved (first attempts by actual send time), over the phase's whole buckets that were
 * observed; the last bucket of the run is left out (sends due just before the end land there).
 */
export function phaseRates(plan: RunPlan, r: Recorded, observedEndMs: number): PhaseRate[] {
  const out: PhaseRate[] = [];
  const p = plan.phases;
  const phases: [string, Span][] = [
    ['warm-up', p.warmup],
    ['baseline', p.baseline],
    ['trigger window', p.trigger],
    ['observation', p.observe],
  ];
  for (const [phase, span] of phases) {
    const [a, b0] = bucketRange(
      { startMs: span.startMs, endMs: Math.min(span.endMs, observedEndMs) },
      r.bucketMs,
    );
    const b = Math.min(b0, Math.floor(observedEndMs / r.bucketMs));
    if (b <= a) continue;
    let achieved = 0;
    for (let i = a; i < b; i++) achieved += r.series.firstSends[i] ?? 0;
    out.push({
      phase,
      seconds: ((b - a) * r.bucketMs) / 1000,
      expected: expectedArrivals(plan, a * r.bucketMs, b * r.bucketMs),
      achieved,
    });
  }
  return out;
}

/** Expected open-loop arrivals in [fromMs, toMs) of the plan; null for a closed loop. */
export function expectedArrivals(plan: RunPlan, fromMs: number, toMs: number): number | null {
  return expectedArrivalsIn(plan.load.arrival, { startMs: fromMs, endMs: toMs });
}

/**
 * Server-side amplification over buckets [a, b): requests the service received divided
 * by origins intended, both over exactly the buckets the scrapes cover. A scrape that
 * follows failed ones carries the increase of several buckets; it counts with all the
 * buckets it covers. Null when no scrape in the window answered.
 */
export function serverAmplification(
  server: ServerSeries,
  offered: readonly number[],
  a: number,
  b: number,
): number | null {
  let received = 0;
  let intended = 0;
  let any = false;
  for (let i = a; i < b; i++) {
    const v = server.received[i];
    const span = server.span[i];
    if (v === null || v === undefined || !span) continue;
    any = true;
    received += v;
    for (let j = i - span + 1; j <= i; j++) intended += offered[j] ?? 0;
  }
  return any && intended > 0 ? received / intended : null;
}
