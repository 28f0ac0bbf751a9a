import jstat from 'jstat';
import { mean, sampleStandardDeviation } from 'simple-statistics';
import type { RunSummary } from './summary.js';
import { describeTally, isValid, tallyOutcomes } from './tally.js';
import { round } from '../../foundation/round.js';
import { tallySensitivity } from './sensitivity.js';

/** A figure across repetitions: mean, sample standard deviation, 95% CI (t distribution), count. */
export interface Distribution {
  readonly mean: number | null;
  readonly stdev: number | null;
  readonly ci95: readonly [number, number] | null;
  readonly count: number;
}

export function distribution(values: readonly (number | null | undefined)[]): Distribution {
  const xs = values.filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
  const n = xs.length;
  if (n === 0) return { mean: null, stdev: null, ci95: null, count: 0 };
  const m = mean(xs);
  if (n === 1) return { mean: round(m, 3), stdev: null, ci95: null, count: 1 };
  const sd = sampleStandardDeviation(xs);
  const half = jstat.jStat.studentt.inv(0.975, n - 1) * (sd / Math.sqrt(n));
  return { mean: round(m, 3), stdev: round(sd, 3), ci95: [round(m - half, 3), round(m + half, 3)], count: n };
}

/** Every numeric leaf of `runs[i]` becomes a Distribution; booleans become counts of true. */
function aggregateObject(objs: readonly Record<string, unknown>[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const first = objs[0] ?? {};
  for (const key of Object.keys(first)) {
    const vals = objs.map((o) => o[key]);
    const sample = vals.find((v) => v !== null && v !== undefined);
    if (typeof sample === 'number') out[key] = distribution(vals as (number | null)[]);
    else if (sample !== null && typeof sample === 'object' && !Array.isArray(sample))
      out[key] = aggregateObject(vals.map((v) => (v ?? {}) as Record<string, unknown>));
  }
  return out;
}

export interface VerdictCount {
  readonly true: number;
  readonly false: number;
  readonly unmeasured: number;
  readonly of: number;
}

function countVerdict(vals: readonly (boolean | null)[]): VerdictCount {
  return {
    true: vals.filter((v) => v === true).length,
    false: vals.filter((v) => v === false).length,
    unmeasured: vals.filter((v) => v === null).length,
    of: vals.length,
  };
}

/**
 * The experiment's summary.json when it has more than one run. Figures, verdict counts
 * and hypothesis counts cover the valid runs only (DESIGN.md §2); `outcomes` counts every
 * run by outcome, and `invalid` says how many runs were invalid and which checks they failed.
 */
export function aggregateRuns(all: readonly RunSummary[]) {
  const first = all[0]!;
  const runs = all.filter(isValid);
  const tally = tallyOutcomes(all);
  const figures = aggregateObject(
    (runs.length > 0 ? runs : [first]).map((s) => ({
      offered: s.offered,
      recorded: s.recorded,
      attempts: s.attempts,
      lateSends: s.lateSends,
      omissionFactor: s.omissionFactor,
      baseline: s.baseline,
      afterTrigger: s.afterTrigger,
      recoveryTimeS: s.recoveryTimeS,
      policies: s.policies,
    })),
  );
  // With no valid run, the shape stays (every distribution empty) but no figure is given.
  if (runs.length === 0) emptyDistributions(figures);
  // Hypothesis verdicts count every run: a baseline threshold that fails is what makes a
  // run invalid (check 2), so counting valid runs alone would hide it.
  const hypothesis = first.hypothesis.map((h, i) => ({
    metric: h.metric,
    window: h.window,
    ...(h.class !== undefined ? { class: h.class } : {}),
    threshold: h.threshold,
    value: distribution(all.map((s) => s.hypothesis[i]?.value ?? null)),
    verdicts: {
      pass: all.filter((s) => s.hypothesis[i]?.verdict === 'pass').length,
      fail: all.filter((s) => s.hypothesis[i]?.verdict === 'fail').length,
      unmeasured: all.filter((s) => s.hypothesis[i]?.verdict === 'unmeasured').length,
      of: all.length,
    },
  }));
  return {
    experiment: first.experiment,
    runtime: first.runtime,
    runs: all.length,
    seeds: all.map((s) => s.seed),
    scale: first.scale,
    usable: all.every((s) => s.usable),
    warnings: all.flatMap((s) => s.warnings.map((w) => `run ${s.run}: ${w}`)),
    /** Runs that gave a verdict (the figures below are theirs alone). */
    validRuns: runs.length,
    /** Runs by outcome, invalid ones included, and the outcomes in a few words. */
    outcomeCounts: tally.outcomes,
    outcomeSummary: describeTally(tally),
    /** The invalid runs: how many, which, and how many failed each validity check. */
    invalid: {
      runs: tally.invalid,
      which: all.filter((s) => !isValid(s)).map((s) => s.run),
      because: tally.invalidBecause,
    },
    capacity: first.capacity,
    offeredPerS: first.offeredPerS,
    trigger: first.trigger,
    recoveryDeadlineS: first.recoveryDeadlineS,
    ...figures,
    recovered: countVerdict(runs.map((s) => s.recovered)),
    metastable: countVerdict(runs.map((s) => s.metastable)),
    hypothesis,
    sensitivity: tallySensitivity(runs.map((s) => s.sensitivity)),
  };
}

function emptyDistributions(o: Record<string, unknown>): void {
  for (const [k, v] of Object.entries(o)) {
    if (v === null || typeof v !== 'object') continue;
    if ('count' in v && 'mean' in v) o[k] = { mean: null, stdev: null, ci95: null, count: 0 };
    else emptyDistributions(v as Record<string, unknown>);
  }
}

export type AggregateSummary = ReturnType<typeof aggregateRuns>;
