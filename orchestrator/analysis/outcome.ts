import type { RecoveryResult } from './recovery.js';
import { trendOf, type Trend } from './trend.js';
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

/** What the system did over the last third of the observation, for naming the sustaining effect. */
export interface SustainingFigures {
  readonly capacityPerS: number;
  /** Requests the service received per second (scraped); null when not scraped. */
  readonly receivedPerS: number | null;
  /** Attempts the client sent per second. */
  readonly attemptsPerS: number;
  readonly amplification: number | null;
  readonly amplificationServer: number | null;
  /** Cache hits / (hits + misses), where the lab has a cache; and the same in the baseline. */
  readonly cacheHitRatio: number | null;
  readonly baselineCacheHitRatio: number | null;
  /** Failed origins / finished origins. */
  readonly errorRatio: number | null;
  /**
   * Worker time spent on error paths (lab.api.errorCost) / worker time available, where
   * the service reports it (api_error_path_seconds_total); null otherwise.
   */
  readonly errorPathShare?: number | null;
}

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
  /** Goodput slope, req/s per s; whether it rises at 95% confidence. */
  readonly goodputSlope: number;
  readonly goodputRising: boolean;
  /** Backlog slope, requests per s; null when the backlog was not scraped. */
  readonly backlogSlope: number | null;
  readonly backlogShrinking: boolean | null;
}

export interface OutcomeResult {
  readonly outcome: Outcome;
  /** The outcome in one sentence, with its evidence. */
  readonly reason: string;
  /** For metastable (and not-recovered): what keeps the degraded state up, as measured. */
  readonly sustainingEffect: string | null;
  /** For not-recovered: the projected recovery time at the measured trend, s after the trigger's end. */
  readonly projectedRecoveryS: number | null;
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
  const none = { sustainingEffect: null, projectedRecoveryS: null, trend: null };
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
  const trend: TrendSummary = {
    ...tail,
    goodputSlope: round(g.slope, 3),
    goodputRising: g.rising,
    backlogSlope: b ? round(b.slope, 3) : null,
    backlogShrinking: b ? b.falling : null,
  };
  const effect = x.sustaining ? describeSustaining(x.sustaining) : null;
  const over = `over the last ${tail.toS - tail.fromS} s`;
  if (!g.rising && !(b?.falling ?? false))
    return {
      outcome: 'metastable',
      reason: `not recovered by the end of the observation (${r.observedAfterS} s after the trigger), and self-sustaining: ${over} goodput shows no upward trend (slope ${fmtSlope(g.slope)}/s per s)${b ? ` and the backlog is not shrinking (slope ${fmtSlope(b.slope)} per s)` : ''}${effect ? `; ${effect}` : ''}`,
      sustainingEffect: effect,
      projectedRecoveryS: null,
      trend,
    };

  // Still draining: when would it get there at this pace?
  const left: number[] = [];
  if (g.rising) left.push(Math.max(0, (r.thresholdPerS - g.last) / g.slope));
  if (b?.falling) left.push(Math.max(0, b.last / -b.slope));
  const projected = round(r.observedAfterS + Math.max(...left), 3);
  return {
    outcome: 'not-recovered',
    reason: `not recovered by the end of the observation (${r.observedAfterS} s after the trigger), but recovering: ${over} ${g.rising ? `goodput rises ${fmtSlope(g.slope)}/s per s` : ''}${g.rising && b?.falling ? ' and ' : ''}${b?.falling ? `the backlog drains ${fmtSlope(-b.slope)} per s` : ''}; at that pace it would recover about ${projected} s after the trigger: observe longer`,
    sustainingEffect: effect,
    projectedRecoveryS: projected,
    trend,
  };
}

/**
 * The sustaining effect in words, from what the lab measured: the rate the service
 * receives against its capacity (with the amplification), the cache hit ratio against
 * the baseline's, the share of the workers' time spent on error paths, and the error
 * ratio. The dominant one comes first: the load when the service receives more than its
 * capacity, else a cache that went cold, else error paths taking a fifth or more of the
 * workers' time (errors making the service slower, which makes more errors).
 */
export function describeSustaining(s: SustainingFigures): string {
  const load =
    s.receivedPerS !== null
      ? `the api receives ${num(s.receivedPerS)}/s against a capacity of ${num(s.capacityPerS)}/s${s.amplificationServer !== null ? ` (amplification ${num(s.amplificationServer, 2)})` : ''}`
      : `the client sends ${num(s.attemptsPerS)} attempts/s against a capacity of ${num(s.capacityPerS)}/s${s.amplification !== null ? ` (amplification ${num(s.amplification, 2)})` : ''}`;
  const overloaded = (s.receivedPerS ?? s.attemptsPerS) >= s.capacityPerS;
  const cache =
    s.cacheHitRatio !== null
      ? `cache hit ratio ${pct(s.cacheHitRatio)}${s.baselineCacheHitRatio !== null ? ` (baseline ${pct(s.baselineCacheHitRatio)})` : ''}`
      : null;
  const coldCache =
    s.cacheHitRatio !== null &&
    s.baselineCacheHitRatio !== null &&
    s.baselineCacheHitRatio - s.cacheHitRatio > 0.2;
  const errors = s.errorRatio !== null && s.errorRatio > 0 ? `${pct(s.errorRatio)} of origins fail` : null;
  const share = s.errorPathShare ?? null;
  const errorPath =
    share !== null && share > 0
      ? `the workers spend ${pct(Math.min(1, share))} of their time on error paths`
      : null;
  const parts = overloaded
    ? [load, cache, errorPath, errors]
    : coldCache
      ? [cache, load, errorPath, errors]
      : share !== null && share >= 0.2
        ? [errorPath, load, cache, errors]
        : [load, cache, errorPath, errors];
  return parts.filter((p): p is string => p !== null).join('; ');
}

function num(x: number, d = 1): string {
  return x.toLocaleString('en-US', { maximumFractionDigits: d });
}

function pct(x: number): string {
  return `${Math.round(x * 1000) / 10}%`;
}

function fmtSlope(x: number): string {
  return round(x, 3).toString();
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
