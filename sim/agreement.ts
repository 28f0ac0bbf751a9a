import type { Outcome } from '../orchestrator/analysis/outcome.js';
import type { Experiment } from '../orchestrator/spec/schema.js';

/**
 * Lab and simulation agree (issue 17, point 10): what "agree" means, shared by
 * `npm run agreement` (bench/perf/agreement.ts, docs/agreement.md) and the reproduction
 * suite's twin check (test/helpers/twin.ts).
 */

/** The scale the reproduction suite runs every catalogue experiment at. */
export const SUITE_SCALE = 0.2;

/**
 * The class an outcome is compared by: recovered and recovered-late are one class (both
 * recovered; only the deadline k × D tells them apart, and the two runtimes' drains may
 * straddle it); every other outcome is its own class.
 */
export function outcomeClass(o: Outcome): string {
  return o === 'recovered-late' ? 'recovered' : o;
}

/** Do the two outcomes agree? null when there is nothing to compare (a side is invalid or unmeasured). */
export function outcomesAgree(lab: Outcome, sim: Outcome): boolean | null {
  if (lab === 'invalid' || sim === 'invalid' || lab === 'unmeasured' || sim === 'unmeasured') return null;
  return outcomeClass(lab) === outcomeClass(sim);
}

/**
 * Why the simulation cannot model an experiment, or null when it can. The simulated lab
 * (sim/SimLab.ts) has the api, Redis, Postgres and the links; it has no LLM provider, so
 * an experiment whose lab has one would be simulated without the component its result
 * rests on.
 */
export function simCannotModel(e: Experiment): string | null {
  if (e.lab.llm)
    return 'its lab has an LLM provider (the stub, its token streams, the api calling it with retries), which the simulated lab does not have: a simulation would run the api without the component the result rests on';
  return null;
}
