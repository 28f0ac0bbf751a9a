import { criterionSensitivity, type CriterionSensitivity } from '../../orchestrator/analysis/sensitivity.js';
import type { RecoveryInput } from '../../orchestrator/analysis/recovery.js';
import type { Validity } from '../../orchestrator/analysis/validity.js';

/**
 * A run's `sensitivity` from a synthetic goodput series (for report and export tests): a
 * baseline of `base`/s for 30 s, a 10 s trigger with no goodput, then `after(i)` for 200 s,
 * judged by the real analysis (window 5 s, hold 10 s, k = 5, tolerance 10% unless `over`).
 */
export function sensitivityOf(
  base: number,
  after: (i: number) => number,
  over: Partial<RecoveryInput> = {},
): CriterionSensitivity {
  const goodput = [
    ...Array<number>(30).fill(base),
    ...Array<number>(10).fill(0),
    ...Array.from({ length: 200 }, (_, i) => after(i)),
  ];
  const validity: Validity = { valid: true, limits: {} as Validity['limits'], checks: [], failed: [] };
  const s = criterionSensitivity({
    recovery: {
      goodput,
      baselineGoodputPerS: base,
      triggerEndS: 40,
      triggerDurationS: 10,
      observedEndS: goodput.length,
      windowS: 5,
      holdS: 10,
      tolerance: 0.1,
      within: 5,
      ...over,
    },
    outcome: {
      validity,
      goodputPerS: goodput,
      backlog: null,
      triggerEndS: 40,
      observedEndS: goodput.length,
      sustaining: null,
    },
  });
  if (!s) throw new Error('a valid run has a sensitivity');
  return s;
}

/** Recovers 30 s (3 × D) after the trigger: recovered-late with k = 2, recovered with k ≥ 5. */
export const recoversAt3D = (): CriterionSensitivity => sensitivityOf(1000, (i) => (i < 30 ? 0 : 1000));
