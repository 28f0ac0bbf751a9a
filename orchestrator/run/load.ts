import type { ArrivalProcess } from '../../bench/arrival/ArrivalProcess.js';
import { constantArrivals } from '../../bench/arrival/constant.js';
import { poissonArrivals } from '../../bench/arrival/poisson.js';
import { seededRng } from '../../bench/rng.js';
import type { RunPlan } from '../spec/plan.js';

/** The run's arrival process, from the experiment's load section. */
export function arrivalsFor(plan: RunPlan): ArrivalProcess {
  const { arrival } = plan.experiment.load;
  return arrival === 'poisson'
    ? poissonArrivals(plan.ratePerS, 0, plan.totalMs, seededRng(plan.seed, 'arrivals'))
    : constantArrivals(plan.ratePerS, 0, plan.totalMs);
}
