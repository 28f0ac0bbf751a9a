import type { ArrivalProcess } from '../../bench/arrival/ArrivalProcess.js';
import { seededRng } from '../../foundation/rng.js';
import { WorkloadMix } from '../../bench/workload/mix.js';
import { arrivalProcess } from '../spec/arrivals/index.js';
import type { RunPlan } from '../spec/plan.js';

/** The run's open-loop arrival process, built by its kind (spec/arrivals/); a closed loop has none. */
export function arrivalsFor(plan: RunPlan): ArrivalProcess {
  return arrivalProcess(plan.load.arrival, { seed: plan.seed, totalMs: plan.totalMs });
}

/** The workload mix, or undefined for the single default request (GET /work). */
export function mixFor(plan: RunPlan): WorkloadMix | undefined {
  if (!plan.experiment.load.mix) return undefined;
  return new WorkloadMix(plan.load.mix, (cls) => seededRng(plan.seed, `keys-${cls}`));
}
