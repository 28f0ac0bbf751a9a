/**
 * Recovery and the metastable verdict, exactly as DESIGN.md §2 defines them, on a
 * per-second goodput series (bucket i covers [i, i+1) s of the run).
 *
 * - Rolling goodput at boundary t: the mean of the W buckets that end at t (a trailing
 *   window; it may reach back into the trigger window).
 * - Recovery point: the first whole-second boundary t >= trigger end at which the
 *   rolling goodput is >= (1 - tolerance) x baseline goodput and stays so at every
 *   boundary up to t + hold. Recovery time = t - trigger end.
 * - Metastable: no recovery within k x trigger duration after the trigger ended. When
 *   the run stopped observing before a recovery within that deadline could have been
 *   confirmed (deadline + hold), the verdict is unmeasured (null), never a guess.
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
  readonly recoveryDeadlineS: number;
  /** true, false, or null when unmeasured. */
  readonly metastable: boolean | null;
  /** Seconds observed after the trigger ended. */
  readonly observedAfterS: number;
  /** The goodput level that counts as recovered, req/s. */
  readonly thresholdPerS: number | null;
  /** Why the verdict is what it is, in one sentence. */
  readonly reason: string;
}

export function analyzeRecovery(x: RecoveryInput): RecoveryResult {
  const deadline = x.within * x.triggerDurationS;
  const observedAfterS = Math.max(0, x.observedEndS - x.triggerEndS);
  const base = { recoveryDeadlineS: round(deadline), observedAfterS: round(observedAfterS) };
  if (x.baselineGoodputPerS === null || !(x.baselineGoodputPerS > 0)) {
    return {
      ...base,
      recovered: false,
      recoveryTimeS: null,
      recoveredAtS: null,
      metastable: null,
      thresholdPerS: null,
      reason: 'no baseline goodput to recover to (unmeasured)',
    };
  }
  const threshold = (1 - x.tolerance) * x.baselineGoodputPerS;
  const w = Math.max(1, Math.round(x.windowS));
  const hold = Math.max(0, Math.round(x.holdS));
  const lastBoundary = Math.floor(x.observedEndS); // buckets [.., lastBoundary) are fully observed
  const rolling = (t: number): number => {
    let s = 0;
    for (let i = t - w; i < t; i++) s += i >= 0 ? (x.goodput[i] ?? 0) : 0;
    return s / w;
  };
  let recoveredAt: number | null = null;
  for (let t = Math.ceil(x.triggerEndS); t + hold <= lastBoundary; t++) {
    let holds = true;
    for (let u = t; u <= t + hold; u++) {
      if (rolling(u) < threshold) {
        holds = false;
        break;
      }
    }
    if (holds) {
      recoveredAt = t;
      break;
    }
  }
  if (recoveredAt !== null) {
    const rt = recoveredAt - x.triggerEndS;
    const metastable = rt > deadline;
    return {
      ...base,
      recovered: true,
      recoveryTimeS: round(rt),
      recoveredAtS: recoveredAt,
      metastable,
      thresholdPerS: round(threshold),
      reason: metastable
        ? `recovered after ${round(rt)} s, later than the deadline of ${round(deadline)} s`
        : `recovered after ${round(rt)} s, within the deadline of ${round(deadline)} s`,
    };
  }
  if (observedAfterS >= deadline + hold) {
    return {
      ...base,
      recovered: false,
      recoveryTimeS: null,
      recoveredAtS: null,
      metastable: true,
      thresholdPerS: round(threshold),
      reason: `not recovered within the observed ${round(observedAfterS)} s after the trigger (deadline ${round(deadline)} s)`,
    };
  }
  return {
    ...base,
    recovered: false,
    recoveryTimeS: null,
    recoveredAtS: null,
    metastable: null,
    thresholdPerS: round(threshold),
    reason: `not recovered within the observed ${round(observedAfterS)} s, which is shorter than the deadline ${round(deadline)} s plus the hold ${hold} s (unmeasured)`,
  };
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}
