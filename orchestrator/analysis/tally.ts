import { OUTCOMES, type Outcome } from './outcome.js';
import type { RunSummary } from './summary.js';
import type { ValidityCheckName } from './validity.js';

/**
 * Outcomes counted over several runs (repetitions, a sweep point), DESIGN.md §2:
 * verdicts come from valid runs only; invalid runs are counted apart, with the checks
 * they failed.
 */

/** A validity check as a reader names it, in counts ("invalid 1 (schedule lag)"). */
export const CHECK_NAMES: Record<ValidityCheckName, string> = {
  recorded: 'offered ≠ recorded',
  baseline: 'baseline hypothesis',
  trigger: 'trigger',
  rate: 'offered rate',
  lag: 'schedule lag',
  cpu: 'generator CPU',
};

/** Whether a run may give a verdict: its validity held (a summary from before validity counts as valid). */
export function isValid(s: Pick<RunSummary, 'outcome'> & { validity?: RunSummary['validity'] }): boolean {
  return s.outcome !== 'invalid' && s.validity?.valid !== false;
}

/**
 * A run's outcome. A summary written before outcomes existed is read from its booleans:
 * there `metastable` meant "not recovered within k × D", so recovered and metastable is
 * recovered-late, and not recovered is that deadline-only metastable verdict (the report
 * says the self-sustaining test was not run).
 */
export function outcomeOf(
  s: Pick<RunSummary, 'metastable' | 'recovered'> & { outcome?: Outcome; validity?: RunSummary['validity'] },
): Outcome {
  if (s.outcome) return s.outcome;
  if (s.validity?.valid === false) return 'invalid';
  if (s.recovered) return s.metastable === true ? 'recovered-late' : 'recovered';
  return s.metastable === true ? 'metastable' : 'unmeasured';
}

export interface OutcomeTally {
  /** Runs of every outcome (invalid included). */
  readonly outcomes: Record<Outcome, number>;
  readonly runs: number;
  readonly valid: number;
  readonly invalid: number;
  /** How many invalid runs failed each check (a run failing two checks counts in both). */
  readonly invalidBecause: Partial<Record<ValidityCheckName, number>>;
}

export function tallyOutcomes(runs: readonly RunSummary[]): OutcomeTally {
  const outcomes = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
  const because: Partial<Record<ValidityCheckName, number>> = {};
  for (const s of runs) {
    const o = isValid(s) ? outcomeOf(s) : 'invalid';
    outcomes[o]++;
    if (o === 'invalid')
      for (const c of new Set((s.validity?.failed ?? []).map((f) => f.check)))
        because[c] = (because[c] ?? 0) + 1;
  }
  return {
    outcomes,
    runs: runs.length,
    valid: runs.length - outcomes.invalid,
    invalid: outcomes.invalid,
    invalidBecause: because,
  };
}

/** Why the invalid runs were invalid, counted: "schedule lag" or "schedule lag 2, generator CPU 1". */
export function describeInvalid(t: Pick<OutcomeTally, 'invalid' | 'invalidBecause'>): string {
  const entries = Object.entries(t.invalidBecause) as [ValidityCheckName, number][];
  if (entries.length === 0) return 'no failed check recorded';
  if (t.invalid === 1) return entries.map(([c]) => CHECK_NAMES[c]).join(', ');
  return entries.map(([c, n]) => `${CHECK_NAMES[c]} ${n}`).join(', ');
}

/**
 * The outcomes of several runs in a few words: the valid runs' outcomes out of the valid
 * runs, then the invalid runs and why: "metastable 2/2; invalid 1 (schedule lag)".
 */
export function describeTally(t: OutcomeTally): string {
  const valid = OUTCOMES.filter((o) => o !== 'invalid' && t.outcomes[o] > 0).map(
    (o) => `${o} ${t.outcomes[o]}/${t.valid}`,
  );
  const parts = [valid.length > 0 ? valid.join(', ') : 'no valid run'];
  if (t.invalid > 0) parts.push(`invalid ${t.invalid} (${describeInvalid(t)})`);
  return parts.join('; ');
}
