import type { RecoveryResult } from './recovery.js';
import { trendOf, type Trend } from './trend.js';
import {
  describeMet,
  describeNoneMet,
  measureMechanisms,
  type Mechanism,
  type SustainingFigures,
} from './mechanisms.js';
import { describeFailed, type Validity } from './validity.js';
import { round } from '../../foundation/round.js';

/** The outcome of a run (DESIGN.md §2). */
export const OUTCOMES = [
  'recovered',
  'recovered-late',
  'metastable',
  'not-recovered',
  'unmeasured',
  'invalid',
] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** The shortest tail the self-sustaining test fits a trend on, s. */
export const MIN_TREND_S = 10;

export type { SustainingFigures } from './mechanisms.js';

export interface OutcomeInput {
  readonly validity: Validity;
  readonly recovery: RecoveryResult;
  /** Goodput per second over the run (bucket i = second i). */
  readonly goodputPerS: readonly number[];
  /** The server's backlog (queue depth) per second, null where not scraped; null when no scrape. */
  readonly backlog: readonly (number | null)[] | null;
  readonly triggerEndS: number;
  readonly observedEndS: number;
  /** Figures over the same tail the trend is fitted on (computed by the caller from `tailOf`). */
  readonly sustaining: SustainingFigures | null;
}

export interface TrendSummary {
  /** The tail fitted: [fromS, toS) of the run. */
  readonly fromS: number;
  readonly toS: number;
  /** The test: Mann–Kendall with the Hamed–Rao correction, one-sided at 95%; slopes are Sen's. */
  readonly test?: string;
  /** Goodput's Sen slope, req/s per s, its 95% interval, and whether it rises at 95% confidence. */
  readonly goodputSlope: number;
  readonly goodputSlopeLow?: number;
  readonly goodputSlopeHigh?: number;
  readonly goodputZ?: number;
  readonly goodputRising: boolean;
  /** Backlog slope, requests per s; null when the backlog was not scraped. */
  readonly backlogSlope: number | null;
  readonly backlogZ?: number | null;
  readonly backlogShrinking: boolean | null;
}

/**
 * When a run that is still recovering would get there at the measured trend: goodput
 * reaching the recovery threshold (basis `goodput`), or, when goodput shows no upward
 * trend yet but the backlog drains, the backlog reaching 0 (basis `backlog`, not a
 * recovery time). Seconds after the trigger's end; the interval comes from Sen's
 * interval of the slope (95%), `highS` null when that interval reaches a slope that never
 * gets there.
 */
export interface Projection {
  readonly basis: 'goodput' | 'backlog';
  readonly atS: number;
  readonly lowS: number;
  readonly highS: number | null;
}

export interface OutcomeResult {
  readonly outcome: Outcome;
  /** The outcome in one sentence, with its evidence. */
  readonly reason: string;
  /** What keeps the degraded state up, as measured: the mechanisms met, the dominant first; null when none is. */
  readonly sustainingEffect: string | null;
  /** Every sustaining mechanism the run measured over the tail, with its figure, threshold and whether it is met. */
  readonly mechanisms: readonly Mechanism[] | null;
  /** For not-recovered: when goodput would reach the recovery threshold at the measured trend, s after the trigger's end. */
  readonly projectedRecoveryS: number | null;
  readonly projection: Projection | null;
  readonly trend: TrendSummary | null;
}

/**
 * The tail of the observation the self-sustaining test looks at: its last third, and at
 * least MIN_TREND_S seconds, in whole buckets; null when the observation after the
 * trigger is shorter than that.
 */
export function tailOf(triggerEndS: number, observedEndS: number): { fromS: number; toS: number } | null {
  const toS = Math.floor(observedEndS + 1e-9);
  const after = toS - Math.ceil(triggerEndS - 1e-9);
  if (after < MIN_TREND_S) return null;
  return { fromS: toS - Math.max(MIN_TREND_S, Math.round(after / 3)), toS };
}

export function classifyOutcome(x: OutcomeInput): OutcomeResult {
  const none = {
    sustainingEffect: null,
    mechanisms: null,
    projectedRecoveryS: null,
    projection: null,
    trend: null,
  };
  if (!x.validity.valid)
    return { ...none, outcome: 'invalid', reason: `invalid run: ${describeFailed(x.validity).join('; ')}` };
  const r = x.recovery;
  if (r.recovered)
    return {
      ...none,
      outcome: r.late ? 'recovered-late' : 'recovered',
      reason: r.reason,
    };
  if (r.thresholdPerS === null) return { ...none, outcome: 'unmeasured', reason: r.reason };
  const tail = tailOf(x.triggerEndS, x.observedEndS);
  if (!r.deadlineObserved || tail === null)
    return {
      ...none,
      outcome: 'unmeasured',
      reason: `not recovered within the observed ${r.observedAfterS} s after the trigger, too short to judge: a recovery within the deadline (${r.recoveryDeadlineS} s) needs the hold and window observed after it, and the trend at least ${MIN_TREND_S} s`,
    };

  const g = trendOf(x.goodputPerS.slice(tail.fromS, tail.toS)) as Trend;
  const b = x.backlog ? trendOf(x.backlog.slice(tail.fromS, tail.toS)) : null;
  // The backlog shrinks when it falls at 95% (one-sided, as goodput's rise is tested) and
  // Sen's 95% interval of its slope lies wholly below 0, i.e. the projection of an empty
  // queue has a finite far end. A queue held at its bound (a listen backlog of 4096, say)
  // only wanders under it as the bound refuses the excess; on such a series the one-sided
  // test alone calls a "drain" that its own interval says may never empty the queue, and a
  // self-sustained collapse would be reported as recovering.
  const shrinking = b !== null && b.falling && b.slopeHigh < 0;
  const fallUnsure = b !== null && b.falling && !shrinking;
  const trend: TrendSummary = {
    ...tail,
    test: 'Mann-Kendall with the Hamed-Rao correction for autocorrelation, one-sided at 95%; Sen slopes',
    goodputSlope: round(g.slope, 3),
    goodputSlopeLow: round(g.slopeLow, 3),
    goodputSlopeHigh: round(g.slopeHigh, 3),
    goodputZ: round(g.z, 3),
    goodputRising: g.rising,
    backlogSlope: b ? round(b.slope, 3) : null,
    backlogZ: b ? round(b.z, 3) : null,
    backlogShrinking: b ? shrinking : null,
  };
  const mechanisms = x.sustaining ? measureMechanisms(x.sustaining) : [];
  const effect = describeMet(mechanisms);
  const after = `not recovered by the end of the observation (${r.observedAfterS} s after the trigger)`;
  const over = `over the last ${tail.toS - tail.fromS} s`;
  const goodputWords = `goodput ${g.rising ? 'rises' : 'shows no upward trend'} (Sen slope ${fmt(g.slope)}/s per s, 95% interval ${fmt(g.slopeLow)} to ${fmt(g.slopeHigh)}; Mann-Kendall z ${fmt(g.z, 2)}, corrected for autocorrelation)`;
  const backlogWords = b
    ? ` and the backlog ${
        shrinking
          ? `drains ${fmt(-b.slope)} per s`
          : fallUnsure
            ? `is not shown to shrink (slope ${fmt(b.slope)} per s, but its 95% interval ${fmt(b.slopeLow)} to ${fmt(b.slopeHigh)} reaches 0: it may never empty)`
            : `is not shrinking (slope ${fmt(b.slope)} per s)`
      }`
    : '';
  const base = { mechanisms, trend, sustainingEffect: effect };

  if (g.rising || shrinking) {
    // Still recovering: when would goodput get back to the threshold at this pace?
    const toAfter = (idx: number): number => tail.fromS + idx - x.triggerEndS;
    const project = (t: Trend, target: number): number[] | null => {
      const dir = Math.sign(t.slope);
      // A slope that does not head for the target never gets there.
      const cross = (slope: number): number | null =>
        slope * dir <= 0 ? null : toAfter(t.medianT + (target - t.medianY) / slope);
      const point = cross(t.slope);
      if (point === null) return null;
      const ends = [cross(t.slopeLow), cross(t.slopeHigh)];
      const finite = ends.filter((e): e is number => e !== null);
      return [
        point,
        Math.min(point, ...finite),
        ends.includes(null) ? Number.POSITIVE_INFINITY : Math.max(point, ...finite),
      ];
    };
    const floor = (v: number): number => round(Math.max(r.observedAfterS, v), 3);
    const asProjection = (basis: Projection['basis'], p: number[] | null): Projection | null =>
      p === null
        ? null
        : {
            basis,
            atS: floor(p[0]!),
            lowS: floor(p[1]!),
            highS: Number.isFinite(p[2]!) ? floor(p[2]!) : null,
          };
    const projection = g.rising
      ? asProjection('goodput', project(g, r.thresholdPerS))
      : b
        ? asProjection('backlog', project(b, 0))
        : null;
    const when =
      projection === null
        ? ''
        : projection.basis === 'goodput'
          ? `; at that pace goodput would reach ${r.thresholdPerS}/s about ${projection.atS} s after the trigger (95% interval ${projection.lowS} to ${projection.highS ?? 'never'} s)`
          : `; goodput shows no upward trend yet, so no recovery time is projected; at that pace the backlog would empty about ${projection.atS} s after the trigger (95% interval ${projection.lowS} to ${projection.highS ?? 'never'} s)`;
    return {
      ...base,
      outcome: 'not-recovered',
      reason: `${after}, but recovering: ${over} ${goodputWords}${backlogWords}${when}: observe longer`,
      projectedRecoveryS: projection?.basis === 'goodput' ? projection.atS : null,
      projection,
    };
  }
  if (effect !== null)
    return {
      ...base,
      outcome: 'metastable',
      reason: `${after}, and self-sustaining: ${over} ${goodputWords}${backlogWords}; sustained by ${effect}`,
      projectedRecoveryS: null,
      projection: null,
    };
  return {
    ...base,
    outcome: 'not-recovered',
    reason: `${after}, and ${over} ${goodputWords}${backlogWords}, but ${mechanisms.length > 0 ? describeNoneMet(mechanisms) : 'no sustaining effect found (nothing that names one was measured)'}`,
    projectedRecoveryS: null,
    projection: null,
  };
}

function fmt(x: number, d = 3): string {
  return round(x, d).toString();
}

/**
 * The class an outcome is compared by (lab against simulation, a lateness replay against
 * its twin): recovered and recovered-late are one class (both recovered; only the
 * deadline k × D tells them apart, and two runs' drains may straddle it); every other
 * outcome is its own class.
 */
export function outcomeClass(o: Outcome): string {
  return o === 'recovered-late' ? 'recovered' : o;
}
