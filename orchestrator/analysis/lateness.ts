import { round } from '../../foundation/round.js';
import { outcomeClass, type Outcome } from './outcome.js';
import type { LatenessVerdict } from './validity.js';

/**
 * Did the generator's lateness change the run's outcome (DESIGN.md §2, validity check 4)?
 * The run's simulated twin is run twice, with the intended send times and with the
 * actual ones the lab recorded (same seed, same work drawn per attempt:
 * orchestrator/run/replay.ts); this compares the two. Pure.
 *
 * Lateness is harmless when both replays have the same outcome class and the figures the
 * outcome rests on agree within their noise:
 *   - goodput after the trigger and amplification (attempts / origins) after the trigger:
 *     the two counts over the window (successes; attempts) differ by at most NOISE_SDS
 *     Poisson standard deviations of their difference, √(n₁ + n₂), and never by more
 *     than the larger of that and RELATIVE_BAND of the larger count (below a few hundred
 *     events Poisson noise is wide; the relative band keeps large counts from being held
 *     to a band narrower than the replays' own noise: retry jitter and the cache's
 *     delays are still drawn in order, see docs/simulation.md);
 *   - recovery time: within one recovery window W (the criterion averages goodput over
 *     [t, t + W), so recoveries less than W apart are the same recovery seen through it).
 */

/** Standard deviations of a count difference within which two counts agree. */
export const NOISE_SDS = 3;
/** The relative band two counts may always differ by. */
export const RELATIVE_BAND = 0.05;

/** One replay's figures: what its outcome rests on. */
export interface ReplayFigures {
  readonly outcome: Outcome;
  /** Its own failed validity checks, in words (empty when valid). */
  readonly failed: readonly string[];
  /** The after-trigger window's length, s (0 when the trigger was never applied). */
  readonly afterTriggerS: number;
  readonly offeredPerS: number | null;
  readonly goodputPerS: number | null;
  readonly amplification: number | null;
  readonly recoveryTimeS: number | null;
}

/** The two replays compared. */
export interface LatenessReplay {
  /** harmless: same outcome and figures within noise; changed: lateness changed them; unjudged: the intended twin was itself invalid. */
  readonly verdict: 'harmless' | 'changed' | 'unjudged';
  readonly intended: ReplayFigures;
  readonly actual: ReplayFigures;
  /** What lateness changed (changed), or why nothing could be judged (unjudged); empty when harmless. */
  readonly differences: readonly string[];
}

export interface NoiseBands {
  /** The recovery criterion's window W, s. */
  readonly recoveryWindowS: number;
}

/** Do counts `a` and `b` agree within their noise? The band is returned for the words. */
export function countsAgree(a: number, b: number): { agree: boolean; band: number } {
  const band = Math.max(NOISE_SDS * Math.sqrt(a + b), RELATIVE_BAND * Math.max(a, b));
  return { agree: Math.abs(a - b) <= band, band };
}

export function compareReplays(
  intended: ReplayFigures,
  actual: ReplayFigures,
  n: NoiseBands,
): LatenessReplay {
  const out = (verdict: LatenessReplay['verdict'], differences: string[]): LatenessReplay => ({
    verdict,
    intended,
    actual,
    differences,
  });
  if (intended.outcome === 'invalid')
    return out('unjudged', [
      `the twin with the intended send times was itself invalid (${intended.failed.join('; ') || 'no check named'})`,
    ]);
  if (actual.outcome === 'invalid')
    return out('changed', [
      `with the actual send times the twin was invalid (${actual.failed.join('; ') || 'no check named'})`,
    ]);
  const d: string[] = [];
  if (outcomeClass(intended.outcome) !== outcomeClass(actual.outcome))
    d.push(`outcome ${actual.outcome} with the actual send times, ${intended.outcome} with the intended`);
  const s = intended.afterTriggerS;
  const count = (perS: number | null): number | null => (perS === null ? null : perS * s);
  const figure = (
    name: string,
    a: number | null,
    b: number | null,
    unit: string,
    toCount: (v: number) => number,
  ): void => {
    if (a === null && b === null) return;
    if (a === null || b === null) {
      d.push(`${name}: ${fmt(b, unit)} with the actual send times, ${fmt(a, unit)} with the intended`);
      return;
    }
    const c = countsAgree(toCount(a), toCount(b));
    if (!c.agree)
      d.push(
        `${name}: ${fmt(b, unit)} with the actual send times, ${fmt(a, unit)} with the intended (apart by more than their noise, ${round(c.band, 1)} events over ${round(s, 3)} s)`,
      );
  };
  figure('goodput after the trigger', intended.goodputPerS, actual.goodputPerS, '/s', (v) => v * s);
  // Attempts over the window: amplification × origins intended in it (the same origins in both).
  const origins = count(intended.offeredPerS) ?? 0;
  figure(
    'amplification after the trigger',
    intended.amplification,
    actual.amplification,
    '',
    (v) => v * origins,
  );
  const ri = intended.recoveryTimeS;
  const ra = actual.recoveryTimeS;
  if (
    (ri === null) !== (ra === null) ||
    (ri !== null && ra !== null && Math.abs(ri - ra) > n.recoveryWindowS)
  )
    d.push(
      `recovery time: ${fmt(ra, ' s')} with the actual send times, ${fmt(ri, ' s')} with the intended${ri !== null && ra !== null ? ` (apart by more than the ${n.recoveryWindowS} s recovery window)` : ''}`,
    );
  return out(d.length === 0 ? 'harmless' : 'changed', d);
}

/** One replay in a few words: "metastable, goodput 0/s, amplification 4, recovery –". */
export function describeReplay(f: ReplayFigures): string {
  return `${f.outcome}, goodput ${fmt(f.goodputPerS, '/s')}, amplification ${fmt(f.amplification, '')}, recovery ${fmt(f.recoveryTimeS, ' s')}`;
}

/** The comparison as validity check 4's verdict on lateness (validity.ts words it). */
export function latenessVerdict(r: LatenessReplay): LatenessVerdict {
  const value = `replay with the actual send times: ${describeReplay(r.actual)}; with the intended: ${describeReplay(r.intended)}`;
  switch (r.verdict) {
    case 'harmless':
      return { kind: 'replayed', harmless: true, value: `${value}: lateness harmless` };
    case 'changed':
      return {
        kind: 'replayed',
        harmless: false,
        value: `${value}: lateness changed ${r.differences.join('; ')}`,
      };
    case 'unjudged':
      return {
        kind: 'unmodelled',
        why: `the lateness replay could not judge: ${r.differences.join('; ')}`,
      };
  }
}

function fmt(v: number | null, unit: string): string {
  return v === null ? '–' : `${round(v, 3)}${unit}`;
}
