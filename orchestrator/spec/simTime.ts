import type { RunPlan } from './plan.js';
import { expectedOrigins } from './arrivals/index.js';

/**
 * How long a simulated run takes on this machine's kind of CPU, for `--dry-run`: the lab's
 * wall time (its schedule) says nothing about a simulation, which runs in virtual time (a
 * simulated sweep that took 67 s was estimated at 3,381 s).
 *
 * The speeds are the simulator benchmark's (benchmarks/results/sim-2026-12-07.md, its run
 * of 16:26 UTC: a 2-core AMD EPYC, idle; default flags, so the event log and the report
 * included): a 610 s run that recovers, nearly every origin one attempt, 638,593 attempts in
 * 5.14 s; its collapse, 2,169,025 attempts in 7.02 s. Of those, the CLI's start and the
 * report are 1 to 5 s (the recovering run without events and report: 2.26 s); the rest is
 * about 250,000 attempts/s recovering and 200,000 collapsing (retry-storm.yaml, 84,000
 * origins collapsing: 3.1 s through the CLI). The range runs from every origin taking one
 * attempt at the faster speed to every origin taking all its attempts at the slower one,
 * plus that overhead. A machine busy with other work takes longer.
 */
export const SIM_ATTEMPTS_PER_S = { fast: 250_000, slow: 200_000 } as const;
export const SIM_OVERHEAD_S = { low: 1, high: 5 } as const;

/** The estimated wall time of one simulated run, seconds; null for a closed loop (its origins depend on the system). */
export function simulatedRunS(plan: RunPlan): { lowS: number; highS: number } | null {
  const origins = expectedOrigins(plan.load.arrival, { startMs: 0, endMs: plan.totalMs });
  if (origins === null) return null;
  const r = plan.experiment.client.retry;
  const attempts = r.policy === 'none' ? 1 : r.maxAttempts;
  return {
    lowS: SIM_OVERHEAD_S.low + origins / SIM_ATTEMPTS_PER_S.fast,
    highS: SIM_OVERHEAD_S.high + (origins * attempts) / SIM_ATTEMPTS_PER_S.slow,
  };
}

/** "3 to 7 s" (whole seconds, the low end rounded down, the high one up). */
export function formatRange(lowS: number, highS: number): string {
  const lo = Math.floor(lowS);
  const hi = Math.max(lo + 1, Math.ceil(highS));
  return `${lo} to ${hi} s`;
}

/** The dry run's wall-time line of a simulated run. */
export function simulatedWallLine(plan: RunPlan, repeat: number): string {
  const t = simulatedRunS(plan);
  if (t === null)
    return '  wall time: a closed loop simulates as many origins as the system lets through: not estimated';
  return `  wall time: simulated, ≈ ${formatRange(t.lowS, t.highS)} per run × ${repeat} = ≈ ${formatRange(t.lowS * repeat, t.highS * repeat)} on an idle core (the simulator's measured speed, orchestrator/spec/simTime.ts; longer on a busy machine)`;
}
