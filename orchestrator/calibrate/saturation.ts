import { round } from '../../foundation/round.js';

/**
 * The saturation rule of the step test (seeds/000: "the offered rate above which
 * goodput stops growing while latency rises non-linearly"), stated exactly.
 *
 * Steps are taken in increasing order of offered rate. Over each step's measurement
 * window (the step after its settling time):
 *   - offered  = origins intended in the window / its length (the rate actually offered),
 *   - goodput  = origins that succeeded within their deadline, completing in the window,
 *   - p99      = response time (from intended time) of those successes.
 * The reference latency q_ref is the p99 of the lowest step with a success.
 *
 * A step is SUSTAINED when
 *   (1) goodput >= (1 - tolerance) x offered          (the system keeps up), and
 *   (2) p99 <= latencyFactor x q_ref                   (latency has not exploded).
 * (1) fails above capacity because the backlog grows and requests miss their deadline;
 * (2) catches the knee even with a generous client timeout, where goodput lags.
 *
 * The SATURATION POINT is the offered rate of the highest sustained step, provided
 * some step above it was measured and none is sustained: every higher offered rate
 * stops growing goodput or blows the latency up. Otherwise:
 *   - "not-reached":        the highest step is sustained (capacity is at least that);
 *   - "below-lowest-step":  no step is sustained (capacity is below the lowest step).
 * An unsustained step below the saturation point (noise: a pause, a short step) does not
 * move it; it is reported as an anomaly.
 *
 * Defaults: tolerance 5%, latencyFactor 10. A factor of 10 over the unloaded p99 is far
 * beyond what queueing does below the knee (an M/D/c at 90% load stays within ~7x of
 * its service time at p99), yet far below the seconds a saturated queue reaches.
 */
export interface SaturationRule {
  /** Goodput may fall short of offered by this fraction (0.05: goodput >= 95% of offered). */
  readonly tolerance: number;
  /** p99 may grow to this multiple of the lowest step's p99. */
  readonly latencyFactor: number;
}

export const DEFAULT_RULE: SaturationRule = { tolerance: 0.05, latencyFactor: 10 };

/** What a step measured (its measurement window only). */
export interface StepFigures {
  /** The step's declared rate (req/s). */
  readonly ratePerS: number;
  /** Origins intended in the window, per second; null when the window is empty. */
  readonly offeredPerS: number | null;
  /** Successes within the deadline completing in the window, per second. */
  readonly goodputPerS: number | null;
  readonly latencyMs: { readonly samples: number; readonly p99: number | null };
}

export interface StepJudgement {
  readonly sustained: boolean;
  /** Why a step is not sustained, in words (empty when it is). */
  readonly why: string[];
}

export type SaturationStatus = 'saturated' | 'not-reached' | 'below-lowest-step';

export interface SaturationResult {
  readonly rule: SaturationRule;
  readonly referenceP99Ms: number | null;
  /** Each input step's judgement, in the input's order. */
  readonly judgements: readonly StepJudgement[];
  readonly status: SaturationStatus;
  /** The index (into the input) of the saturation step; null unless saturated. */
  readonly saturationIndex: number | null;
  /** The highest sustained step's index, whatever the status (a lower bound when not reached). */
  readonly highestSustainedIndex: number | null;
  /** The first step above the saturation point (the bracket's upper end, for refining); null when none. */
  readonly aboveIndex: number | null;
  /** Unsustained steps below the highest sustained one (noise), by index. */
  readonly anomalies: readonly number[];
  /** The step with the highest goodput, by index (null when nothing succeeded). */
  readonly peakGoodputIndex: number | null;
  /** One sentence: what was found. */
  readonly reason: string;
}

export function judgeSteps(
  steps: readonly StepFigures[],
  rule: SaturationRule = DEFAULT_RULE,
): SaturationResult {
  const order = steps.map((_, i) => i).sort((a, b) => steps[a]!.ratePerS - steps[b]!.ratePerS);
  const ref = order.map((i) => steps[i]!).find((s) => s.latencyMs.samples > 0 && s.latencyMs.p99 !== null);
  const qRef = ref?.latencyMs.p99 ?? null;
  const judgements = steps.map((s): StepJudgement => {
    const why: string[] = [];
    if (s.offeredPerS === null || !(s.offeredPerS > 0)) why.push('no origin was offered in its window');
    else if (s.goodputPerS === null || s.goodputPerS < (1 - rule.tolerance) * s.offeredPerS)
      why.push(
        `goodput ${s.goodputPerS ?? 0}/s < ${pct(1 - rule.tolerance)} of the ${round(s.offeredPerS, 3)}/s offered`,
      );
    if (s.latencyMs.samples === 0 || s.latencyMs.p99 === null) why.push('no success to measure latency on');
    else if (qRef !== null && s.latencyMs.p99 > rule.latencyFactor * qRef)
      why.push(`p99 ${s.latencyMs.p99} ms > ${rule.latencyFactor} x ${qRef} ms (the lowest step's p99)`);
    return { sustained: why.length === 0, why };
  });
  const sustained = order.filter((i) => judgements[i]!.sustained);
  const top = sustained.at(-1);
  const topPos = top === undefined ? -1 : order.indexOf(top);
  const anomalies = order.slice(0, Math.max(0, topPos)).filter((i) => !judgements[i]!.sustained);
  let peak: number | null = null;
  for (const i of order)
    if (
      (steps[i]!.goodputPerS ?? 0) > 0 &&
      (peak === null || steps[i]!.goodputPerS! > steps[peak]!.goodputPerS!)
    )
      peak = i;
  const base = { rule, referenceP99Ms: qRef, judgements, anomalies, peakGoodputIndex: peak };
  if (top === undefined)
    return {
      ...base,
      status: 'below-lowest-step',
      saturationIndex: null,
      highestSustainedIndex: null,
      aboveIndex: order[0] ?? null,
      reason: steps.length
        ? `no step was sustained: the capacity is below the lowest step (${round(steps[order[0]!]!.ratePerS, 3)}/s)`
        : 'no step was measured',
    };
  if (topPos === order.length - 1)
    return {
      ...base,
      status: 'not-reached',
      saturationIndex: null,
      highestSustainedIndex: top,
      aboveIndex: null,
      reason: `the highest step (${round(steps[top]!.ratePerS, 3)}/s) was sustained: the saturation point is above it`,
    };
  const above = order[topPos + 1]!;
  return {
    ...base,
    status: 'saturated',
    saturationIndex: top,
    highestSustainedIndex: top,
    aboveIndex: above,
    reason: `sustained up to ${round(steps[top]!.ratePerS, 3)}/s; no step above it was (the next, ${round(steps[above]!.ratePerS, 3)}/s: ${judgements[above]!.why.join('; ')})`,
  };
}

function pct(x: number): string {
  return `${Math.round(x * 10000) / 100}%`;
}
