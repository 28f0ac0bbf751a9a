import { deriveSeed } from '../../foundation/rng.js';
import type { Experiment } from './schema.js';
import { triesPerOrigin } from './originRules.js';
import { RateProfile } from '../../bench/arrival/profile.js';
import { planLoad, type LoadPlan } from './loadPlan.js';
import { triggerWindowMs, type TriggerSpec } from './sections/schedule.js';
import { apiReplicaCount } from './sections/lab.js';
import { builtinLab } from './builtinLab.js';
import { BenchError } from '../../foundation/errors.js';

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
  /** The file the experiment was read from, when it was (errors name it). */
  readonly sourceFile?: string | undefined;
  readonly scale: number;
  /** 1-based index of this run among the repetitions. */
  readonly run: number;
  /** This run's seed, derived from the experiment seed and the run index. */
  readonly seed: number;
  readonly capacity: PlannedCapacity;
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

/**
 * The capacity `% capacity` rates were resolved against, and where it came from: the
 * lab's declaration (nominal), or a step test's saturation point stored by `metabench
 * calibrate` for this lab configuration on this machine (measured).
 */
export interface PlannedCapacity {
  /** c / S of the built-in lab; null for a system metabench did not write (its work is not declared). */
  readonly nominalPerS: number | null;
  readonly measuredPerS: number | null;
  /** The capacity used for `% capacity` (null: none known, a system never calibrated; its rates are absolute). */
  readonly usedPerS: number | null;
  readonly source: 'nominal' | 'measured' | 'unknown';
  /** Where it came from, in words. */
  readonly from: string;
  /** The calibration behind a measured capacity (null when nominal). */
  readonly calibration: MeasuredCapacity | null;
}

/** A measured capacity, as the calibration store gives it (orchestrator/calibrate/store.ts). */
export interface MeasuredCapacity {
  readonly perS: number;
  /** The calibration file it was read from. */
  readonly file: string;
  readonly measuredAt: string;
  /** The calibration's results folder (steps.json, report.md). */
  readonly resultsDir: string;
  /** The machine it was measured on, in one line. */
  readonly machine: string;
  /** What differs from when it was measured (another Node or kernel), if anything. */
  readonly note?: string;
}

export interface PlannedTrigger extends Span {
  readonly spec: TriggerSpec;
}

export interface Span {
  readonly startMs: number;
  readonly endMs: number;
}

/**
 * Nominal capacity μ = c / S of the worker-pool api (DESIGN.md §2), with S the mean
 * declared work per request: with a mix whose classes ask for cost classes, the mean
 * over the mix (Σ share × that class's mean work). With N api replicas it is their sum,
 * N c / S.
 */
export function nominalCapacityPerS(e: Experiment): number {
  const lab = builtinLab(e, 'a nominal capacity (workers / mean work)');
  return (apiReplicaCount(lab.api) * lab.api.workers) / (meanWorkMs(e) / 1000);
}

/** How the nominal capacity is made, in words: `8 workers`, or `3 replicas × 8 workers`. */
export function describeWorkers(e: Experiment): string {
  const api = builtinLab(e, 'the workers of the api').api;
  const n = apiReplicaCount(api);
  return `${n > 1 ? `${n} replicas × ` : ''}${api.workers} workers`;
}

/** The mean declared work per request, S (over the mix when its classes ask for cost classes). */
export function meanWorkMs(e: Experiment): number {
  const api = builtinLab(e, 'the mean work per request').api;
  if (!e.load.mix) return api.work.mean;
  return e.load.mix.reduce(
    (a, c) =>
      a + c.share * (c.cost !== undefined ? (api.costs?.[c.cost]?.mean ?? api.work.mean) : api.work.mean),
    0,
  );
}

/** The capacity a run uses for `% capacity`: the measured one when given, else the nominal one. */
export function planCapacity(
  e: Experiment,
  measured: MeasuredCapacity | null | undefined,
  nominalWhy = 'no calibration of this lab on this machine',
): PlannedCapacity {
  // A system's work is its own: only a calibration knows its capacity.
  const nominalPerS = e.lab ? nominalCapacityPerS(e) : null;
  if (measured)
    return {
      nominalPerS,
      measuredPerS: measured.perS,
      usedPerS: measured.perS,
      source: 'measured',
      from: `measured by metabench calibrate on ${measured.measuredAt} (${measured.file})`,
      calibration: measured,
    };
  if (nominalPerS === null) {
    if (usesCapacityFraction(e))
      throw new BenchError(
        'E_USAGE',
        `${e.name}: a rate written as % capacity needs the system's capacity, and this system (system:) has no calibration on this machine`,
        'run `metabench calibrate <file>` with absolute steps (--steps 50/s,100/s,…) first, or write the rates as absolute ones (300/s)',
      );
    return {
      nominalPerS: null,
      measuredPerS: null,
      usedPerS: null,
      source: 'unknown',
      from: `unknown: your own system (system:) has no calibration on this machine; every rate is absolute`,
      calibration: null,
    };
  }
  return {
    nominalPerS,
    measuredPerS: null,
    usedPerS: nominalPerS,
    source: 'nominal',
    from: `nominal: ${describeWorkers(e)} / ${+meanWorkMs(e).toFixed(3)} ms mean work (${nominalWhy})`,
    calibration: null,
  };
}

/**
 * Which capacity `% capacity` rates use, in one line, for the status output at a run's
 * start: the capacity and its source, and for a measured one the calibration file it was
 * read from and when it was measured.
 */
export function describeCapacity(c: PlannedCapacity, usesPercent: boolean): string {
  const f = (x: number | null): string => (x === null ? 'unknown' : `${+x.toFixed(3)}/s`);
  const what =
    c.source === 'measured' && c.calibration
      ? `${f(c.usedPerS)} measured (calibration ${c.calibration.file}, measured ${c.calibration.measuredAt}; nominal ${f(c.nominalPerS)})`
      : c.source === 'measured'
        ? `${f(c.usedPerS)} measured (${c.from})`
        : `${f(c.usedPerS)} ${c.from}`;
  return `capacity for % capacity: ${what}${usesPercent ? '' : ' — unused: no rate here is written as % capacity'}`;
}

/** Whether any of the load's rates is written as `% capacity`. */
export function usesCapacityFraction(e: Experiment): boolean {
  return JSON.stringify(e.load).includes('capacityFraction');
}

/** The run seed: run 1 of a single run uses the experiment seed itself, so a seed reproduces. */
export function runSeed(seed: number, run: number): number {
  return run === 1 ? seed : deriveSeed(seed, `run-${run}`);
}

export function planRun(
  e: Experiment,
  opts: {
    scale: number;
    run: number;
    sourceFile?: string | undefined;
    /** A measured capacity for this lab on this machine (calibrate); `% capacity` then uses it. */
    capacity?: MeasuredCapacity | null | undefined;
    /** Why the nominal capacity is used, when it is (default: no calibration found). */
    nominalWhy?: string | undefined;
    /** A capacity already resolved (a simulated twin takes its lab run's): used as it is. */
    planned?: PlannedCapacity | undefined;
  },
): RunPlan {
  const f = opts.scale;
  const capacity = opts.planned ?? planCapacity(e, opts.capacity, opts.nominalWhy);
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
    planLoad(e.load, {
      // No capacity known: planCapacity refused every % capacity rate, so none is resolved.
      capacityPerS: capacity.usedPerS ?? Number.NaN,
      scale: f,
      totalMs: observe.endMs,
      sourceFile: opts.sourceFile,
    }),
    triggers,
  );
  return {
    experiment: e,
    ...(opts.sourceFile !== undefined ? { sourceFile: opts.sourceFile } : {}),
    scale: f,
    run: opts.run,
    seed: runSeed(e.seed, opts.run),
    capacity,
    ratePerS: load.meanPerS ?? 0,
    load,
    phases: { warmup, baseline, trigger, observe },
    triggers,
    totalMs: observe.endMs,
    recovery: planRecovery(e, f),
    deadlineMs: e.client.deadline ?? Number.POSITIVE_INFINITY,
  };
}

/**
 * The recovery criterion of a run at `scale`: the one place it is derived, for the run's
 * plan and for a re-analysis of its record with other criteria (report --set).
 */
export function planRecovery(e: Experiment, scale: number): RunPlan['recovery'] {
  return {
    within: e.recovery.within,
    tolerance: e.recovery.tolerance,
    windowMs: e.recovery.window * scale,
    holdMs: e.recovery.hold * scale,
  };
}

/**
 * A derived cap never exceeds this: past it a process runs out of file descriptors. When
 * the load needs more, attempts wait in the client and the report says the open loop
 * turned partly closed.
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
  const attempts = triesPerOrigin(c) * concurrentPerOrigin;
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
