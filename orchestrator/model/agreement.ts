import { outcomeClass, type Outcome } from '../analysis/outcome.js';
import type { Experiment } from '../spec/schema.js';
import { simRefusals } from '../../sim/refusals.js';
import { planRun } from '../spec/plan.js';
import { smallestAcceptedScale } from '../spec/scaleLimits.js';

/**
 * Lab and simulation agree (issue 17, point 10): what "agree" means, shared by
 * `npm run agreement` (benchmarks/agreement.ts, docs/agreement.md) and the reproduction
 * suite's twin check (test/helpers/twin.ts).
 */

/**
 * The least scale the reproduction suite runs anything at: below it a lab run is mostly
 * its start-up and its first scrapes (one a second), and the suite's run time was
 * budgeted at it. Every experiment runs at max(this, its smallest accepted scale).
 */
export const SUITE_MIN_SCALE = 0.2;

/**
 * The scale the reproduction suite (and the scale test, and `npm run agreement`) runs an
 * experiment at: its smallest accepted scale (orchestrator/spec/scaleLimits.ts, from its
 * plan at nominal capacity), and no less than SUITE_MIN_SCALE. Derived, never listed by
 * hand: an experiment whose outcome class changes at it has a limit the rules miss.
 */
export function suiteScale(e: Experiment, sourceFile?: string): number {
  const plan = planRun(e, { scale: 1, run: 1, sourceFile });
  return Math.max(SUITE_MIN_SCALE, smallestAcceptedScale(plan));
}

/** The class an outcome is compared by (lives with the outcomes: a lateness replay compares by it too). */
export { outcomeClass };

/** Do the two outcomes agree? null when there is nothing to compare (a side is invalid or unmeasured). */
export function outcomesAgree(lab: Outcome, sim: Outcome): boolean | null {
  if (lab === 'invalid' || sim === 'invalid' || lab === 'unmeasured' || sim === 'unmeasured') return null;
  return outcomeClass(lab) === outcomeClass(sim);
}

/** Why the simulation cannot model an experiment (sim/refusals.ts), or null when it can. */
export function simCannotModel(e: Experiment): string | null {
  return simRefusals(e)[0]?.message ?? null;
}
