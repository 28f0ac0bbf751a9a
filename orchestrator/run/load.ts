import type { ArrivalProcess } from '../../bench/arrival/ArrivalProcess.js';
import { onOffArrivals } from '../../bench/arrival/onOff.js';
import { RateProfile } from '../../bench/arrival/profile.js';
import { profiledArrivals } from '../../bench/arrival/profiled.js';
import { replayArrivals } from '../../bench/arrival/replay.js';
import { wavesArrivals } from '../../bench/arrival/waves.js';
import { seededRng } from '../../foundation/rng.js';
import { WorkloadMix } from '../../bench/workload/mix.js';
import type { ArrivalPlan } from '../spec/loadPlan.js';
import type { RunPlan } from '../spec/plan.js';

/** One entry per open-loop arrival kind: a new kind is one module plus one line here. */
const arrivalKinds = {
  profile: (a, plan) =>
    profiledArrivals(new RateProfile(a.segments), a.law, seededRng(plan.seed, 'arrivals'), a.label),
  waves: (a, plan) =>
    wavesArrivals({ ...a, startMs: 0, endMs: plan.totalMs }, seededRng(plan.seed, 'arrivals')),
  onOff: (a, plan) =>
    onOffArrivals({ ...a, startMs: 0, endMs: plan.totalMs }, seededRng(plan.seed, 'arrivals')),
  timestamps: (a, plan) => replayArrivals(a.timesMs, plan.totalMs),
} satisfies {
  [K in Exclude<ArrivalPlan['kind'], 'closed'>]: (
    a: Extract<ArrivalPlan, { kind: K }>,
    plan: RunPlan,
  ) => ArrivalProcess;
};

/** The run's open-loop arrival process (a closed loop has none: its users pace themselves). */
export function arrivalsFor(plan: RunPlan): ArrivalProcess {
  const a = plan.load.arrival;
  if (a.kind === 'closed') throw new Error('a closed loop has no arrival process');
  return (arrivalKinds[a.kind] as (a: ArrivalPlan, plan: RunPlan) => ArrivalProcess)(a, plan);
}

/** The workload mix, or undefined for the single default request (GET /work). */
export function mixFor(plan: RunPlan): WorkloadMix | undefined {
  if (!plan.experiment.load.mix) return undefined;
  return new WorkloadMix(plan.load.mix, (cls) => seededRng(plan.seed, `keys-${cls}`));
}
