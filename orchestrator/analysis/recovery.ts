import { round } from '../../foundation/round.js';

/**
 * Recovery, exactly as DESIGN.md §2 defines it, on a per-second goodput series (bucket
 * i covers [i, i+1) s of the run).
 *
 * - Leading window at second t: the mean goodput of the W buckets [t, t + W). A leading
 *   window never reaches back into the trigger, so a system that is healthy the instant
 *   the trigger ends is recovered at once, not after W.
 * - Recovery point: the first whole second t >= trigger end whose leading window is at
 *   least (1 - tolerance) x baseline goodput, and so is every leading window that starts
 *   in [t, t + hold]. Recovery time = t - trigger end, and 0 when that point is the first
 *   whole second after the trigger (goodput never fell below the threshold after it;
 *   the fraction of a second before the first bucket boundary is below our resolution).
 * - A recovery point needs its last window observed: t + hold + W <= the end of the
 *   observation.
 *
 * Whether a run that did not recover is metastable, still draining, or unmeasured is
 * decided by outcome.ts from the trend of the last third of the observation.
 */
export interface RecoveryInput {
  readonly goodput: readonly number[];
  readonly baselineGoodputPerS: number | null;
  readonly triggerEndS: number;
  readonly triggerDurationS: number;
  /** End of the observed window (seconds since run start); buckets from here on are ignored. */
  readonly observedEndS: number;
  readonly windowS: number;
  readonly holdS: number;
  readonly tolerance: number;
  /** The declared multiple k of the trigger duration. */
  readonly within: number;
}

export interface RecoveryResult {
  readonly recovered: boolean;
  readonly recoveryTimeS: number | null;
  /** The recovery point (s since run start, a whole-second boundary); null when not recovered. */
  readonly recoveredAtS: number | null;
  /** k x trigger duration, s after the trigger's end. */
  readonly recoveryDeadlineS: number;
  /** Recovered, but later than the deadline. */
  readonly late: boolean;
  /** Seconds observed after the trigger ended. */
  readonly observedAfterS: number;
  /** Whether the observation reached past the deadline far enough to confirm a recovery there (deadline + hold + W). */
  readonly deadlineObserved: boolean;
  /** The goodput level that counts as recovered, req/s. */
  readonly thresholdPerS: number | null;
  /** Why, in one sentence. */
  readonly reason: string;
}

export function analyzeRecovery(x: RecoveryInput): RecoveryResult {
  const deadline = x.within * x.triggerDurationS;
  const observedAfterS = Math.max(0, x.observedEndS - x.triggerEndS);
  const w = Math.max(1, Math.round(x.windowS));
  const hold = Math.max(0, Math.round(x.holdS));
  const base = {
    recoveryDeadlineS: round(deadline, 3),
    observedAfterS: round(observedAfterS, 3),
    deadlineObserved: observedAfterS >= deadline + hold + w,
  };
  const none = { recovered: false, recoveryTimeS: null, recoveredAtS: null, late: false };
  if (x.baselineGoodputPerS === null || !(x.baselineGoodputPerS > 0))
    return { ...base, ...none, thresholdPerS: null, reason: 'no baseline goodput to recover to' };
  const threshold = (1 - x.tolerance) * x.baselineGoodputPerS;
  const lastBoundary = Math.floor(x.observedEndS + 1e-9); // buckets [.., lastBoundary) are fully observed
  const leading = (t: number): number => {
    let s = 0;
    for (let i = t; i < t + w; i++) s += x.goodput[i] ?? 0;
    return s / w;
  };
  const first = Math.ceil(x.triggerEndS - 1e-9);
  for (let t = first; t + hold + w <= lastBoundary; t++) {
    let holds = true;
    for (let u = t; u <= t + hold; u++)
      if (leading(u) < threshold) {
        holds = false;
        break;
      }
    if (!holds) continue;
    const rt = t === first ? 0 : round(t - x.triggerEndS, 3);
    const late = rt > deadline;
    return {
      ...base,
      recovered: true,
      recoveryTimeS: rt,
      recoveredAtS: t,
      late,
      thresholdPerS: round(threshold, 3),
      reason:
        rt === 0
          ? `goodput never fell below ${round(threshold, 3)}/s after the trigger (recovery time 0)`
          : `recovered after ${rt} s, ${late ? 'later than' : 'within'} the deadline of ${round(deadline, 3)} s`,
    };
  }
  return {
    ...base,
    ...none,
    thresholdPerS: round(threshold, 3),
    reason: `not recovered to ${round(threshold, 3)}/s within the observed ${round(observedAfterS, 3)} s after the trigger`,
  };
}
