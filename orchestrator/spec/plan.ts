import { deriveSeed } from '../../bench/rng.js';
import type { Experiment } from './schema.js';
import { RateProfile } from '../../bench/arrival/profile.js';
import { planLoad, type LoadPlan } from './loadPlan.js';
import { triggerWindowMs, type TriggerSpec } from './sections/schedule.js';

/**
 * One run's plan: the experiment with capacity resolved, rates in req/s, and every
 * phase placed on the run's timeline (ms since run start), after `--scale`.
 *
 * `--scale F` multiplies every duration of the schedule and of the recovery criterion
 * (phases, trigger, observation, recovery window and hold) by F and changes nothing
 * else: rates, timeouts and service times stay as declared.
 */
export interface RunPlan {
  readonly experiment: Experiment;
  readonly scale: number;
  /** 1-based index of this run among the repetitions. */
  readonly run: number;
  /** This run's seed, derived from the experiment seed and the run index. */
  readonly seed: number;
  readonly capacity: { readonly nominalPerS: number; readonly measuredPerS: number | null };
  /** Expected origins per second over the run (open loop); for a closed loop, 0. */
  readonly ratePerS: number;
  readonly load: LoadPlan;
  readonly phases: {
    readonly warmup: Span;
    readonly baseline: Span;
    readonly trigger: Span;
    readonly observe: Span;
  };
  /** Each trigger placed on the run's timeline (phases.trigger spans them all). */
  readonly triggers: readonly PlannedTrigger[];
  readonly totalMs: number;
  readonly recovery: {
    readonly within: number;
    readonly tolerance: number;
    readonly windowMs: number;
    readonly holdMs: number;
  };
  /** Client deadline per origin, ms after intended time; Infinity when none. */
  readonly deadlineMs: number;
}

export interface PlannedTrigger extends Span {
  readonly spec: TriggerSpec;
}

export interface Span {
  readonly startMs: number;
  readonly endMs: number;
}

/** Nominal capacity μ = c / S of the worker-pool api (DESIGN.md §2). */
export function nominalCapacityPerS(e: Experiment): number {
  return e.lab.api.workers / (e.lab.api.work.mean / 1000);
}

/** The run seed: run 1 of a single run uses the experiment seed itself, so a seed reproduces. */
export function runSeed(seed: number, run: number): number {
  return run === 1 ? seed : deriveSeed(seed, `run-${run}`);
}

export function planRun(
  e: Experiment,
  opts: { scale: number; run: number; sourceFile?: string | undefined },
): RunPlan {
  const f = opts.scale;
  const nominal = nominalCapacityPerS(e);
  const s = e.schedule;
  const warmup = { startMs: 0, endMs: s.warmup * f };
  const baseline = { startMs: warmup.endMs, endMs: warmup.endMs + s.baseline * f };
  const triggers = s.triggers.map((t) => ({
    spec: t,
    startMs: baseline.endMs + t.atMs * f,
    endMs: baseline.endMs + (t.atMs + t.duration) * f,
  }));
  const trigger = { startMs: baseline.endMs, endMs: baseline.endMs + triggerWindowMs(s.triggers) * f };
  const observe = { startMs: trigger.endMs, endMs: trigger.endMs + s.observe * f };
  const load = withLoadSpikes(
    planLoad(e.load, { nominalPerS: nominal, scale: f, totalMs: observe.endMs, sourceFile: opts.sourceFile }),
    triggers,
  );
  return {
    experiment: e,
    scale: f,
    run: opts.run,
    seed: runSeed(e.seed, opts.run),
    capacity: { nominalPerS: nominal, measuredPerS: null },
    ratePerS: load.meanPerS ?? 0,
    load,
    phases: { warmup, baseline, trigger, observe },
    triggers,
    totalMs: observe.endMs,
    recovery: {
      within: e.recovery.within,
      tolerance: e.recovery.tolerance,
      windowMs: e.recovery.window * f,
      holdMs: e.recovery.hold * f,
    },
    deadlineMs: e.client.deadline ?? Number.POSITIVE_INFINITY,
  };
}

/**
 * A derived cap never exceeds this: past it a process runs out of file descriptors (and
 * undici scans its clients per request). When the load needs more, attempts wait in the
 * client and the report says the open loop turned partly closed.
 */
export const MAX_DERIVED_CONNECTIONS = 16_384;

/**
 * Connections the client may open: enough for every attempt that can be in flight at
 * the peak (rate x attempts, hedges included, x the longest an attempt can last), so the client never
 * queues a request behind a busy connection. Doubled for Poisson bursts.
 */
export function connectionCap(plan: RunPlan): number {
  const c = plan.experiment.client;
  if (c.connections !== undefined) return c.connections;
  // A hedged origin can have its hedges in flight beside the attempt they hedge.
  const concurrentPerOrigin = 1 + (c.hedge?.max ?? 0);
  if (plan.load.arrival.kind === 'closed') return plan.load.arrival.users * concurrentPerOrigin;
  const attempts = (c.retry.policy === 'none' ? 1 : c.retry.maxAttempts) * concurrentPerOrigin;
  const inFlight = (plan.load.peakPerS ?? 0) * attempts * (c.timeout / 1000);
  return Math.min(MAX_DERIVED_CONNECTIONS, Math.max(64, Math.ceil(2 * inFlight) + 16));
}

/**
 * A load spike is part of the offered load, not an action on the lab: the open loop's
 * rate profile is multiplied by the factor over the spike's span, so arrivals stay
 * exact and seeded (the schema admits spikes only on profile-shaped loads).
 */
function withLoadSpikes(load: LoadPlan, triggers: readonly PlannedTrigger[]): LoadPlan {
  const spikes = triggers.filter((t) => t.spec.kind === 'load-spike');
  if (spikes.length === 0 || load.arrival.kind !== 'profile') return load;
  let profile = new RateProfile(load.arrival.segments);
  for (const t of spikes)
    if (t.spec.kind === 'load-spike') profile = profile.scaled(t.startMs, t.endMs, t.spec.factor);
  const segments = profile.segments;
  return {
    ...load,
    arrival: { ...load.arrival, segments },
    meanPerS: profile.endMs > 0 ? profile.total / (profile.endMs / 1000) : 0,
    peakPerS: Math.max(0, ...segments.map((x) => Math.max(x.fromPerS, x.toPerS))),
  };
}
