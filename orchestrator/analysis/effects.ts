import jstat from 'jstat';
import { numericLevels, sortedLevels, type Level } from './levels.js';

/**
 * Factorial effects of a two-factor sweep (DESIGN.md §6, a factorial design): the main
 * effects of factors A and B and their interaction A×B on one figure of merit, from a
 * linear model with an interaction term fitted by least squares over every valid run:
 *
 *   y = β0 + βA·xA + βB·xB + βAB·xA·xB + ε
 *
 * Each factor is coded on [−1, +1]: its lowest level −1, its highest +1 (numeric levels
 * in between proportionally; two levels that are not numbers in the order the sweep file
 * lists them). An effect is reported as 2β, as in the design-of-experiments literature:
 * the change of y from a factor's low level to its high one, averaged over the other
 * factor; the interaction is half the difference between A's effect at B high and at B
 * low. Standard errors and 95% confidence intervals (t distribution, n − 4 degrees of
 * freedom) are those of β, doubled. With more than two numeric levels the model is
 * linear in each factor: a curved response shows as residual spread, not as an effect.
 */
export interface EffectObservation {
  readonly a: Level;
  readonly b: Level;
  readonly y: number;
}

export interface Effect {
  /** "A", "B" or "A × B", with the factors' names. */
  readonly term: string;
  readonly kind: 'main' | 'interaction';
  readonly estimate: number;
  readonly se: number;
  readonly ci95: readonly [number, number];
}

export interface EffectsFit {
  /** Runs in the fit. */
  readonly n: number;
  readonly dfResid: number;
  /** The grand mean of the coded design (β0). */
  readonly intercept: number;
  readonly residualSd: number;
  /** Low and high level of each factor (coded −1 and +1). */
  readonly coding: readonly { readonly factor: string; readonly low: Level; readonly high: Level }[];
  /** A, B, A × B, in this order. */
  readonly effects: readonly Effect[];
}

export type EffectsResult =
  { readonly ok: true; readonly fit: EffectsFit } | { readonly ok: false; readonly reason: string };

interface Coding {
  readonly low: Level;
  readonly high: Level;
  readonly code: (v: Level) => number;
}

/** A factor's levels on [−1, +1], or why the linear model cannot code them. */
function coding(name: string, levels: readonly Level[]): Coding | string {
  const distinct = [...new Set(levels)];
  if (distinct.length < 2) return `${name} takes only one level`;
  const num = numericLevels(distinct);
  if (num) {
    const sorted = sortedLevels(distinct);
    const [lo, hi] = [num.value(sorted[0]!), num.value(sorted.at(-1)!)];
    return { low: sorted[0]!, high: sorted.at(-1)!, code: (v) => (2 * (num.value(v) - lo)) / (hi - lo) - 1 };
  }
  if (distinct.length > 2)
    return `${name} has ${distinct.length} levels that are not numbers; the effects need two levels, or numeric ones`;
  return { low: distinct[0]!, high: distinct[1]!, code: (v) => (v === distinct[0] ? -1 : 1) };
}

export function twoFactorEffects(
  names: readonly [string, string],
  obs: readonly EffectObservation[],
): EffectsResult {
  const ys = obs.filter((o) => Number.isFinite(o.y));
  if (ys.length === 0) return { ok: false, reason: 'no valid run measured it' };
  const ca = coding(
    names[0],
    ys.map((o) => o.a),
  );
  const cb = coding(
    names[1],
    ys.map((o) => o.b),
  );
  if (typeof ca === 'string') return { ok: false, reason: ca };
  if (typeof cb === 'string') return { ok: false, reason: cb };
  if (ys.length <= 4)
    return {
      ok: false,
      reason: `${ys.length} runs measured it; estimating four terms with their errors needs at least 5 (repeat the points)`,
    };
  const X = ys.map((o) => {
    const [a, b] = [ca.code(o.a), cb.code(o.b)];
    return [1, a, b, a * b];
  });
  const m = jstat.jStat.models.ols(
    ys.map((o) => o.y),
    X,
  );
  const finite = [...m.coef, ...m.t.se.slice(1)].every(Number.isFinite);
  if (!finite)
    return {
      ok: false,
      reason: 'the runs do not cover enough combinations of the two factors to separate the effects',
    };
  const terms = [names[0], names[1], `${names[0]} × ${names[1]}`];
  // Floating-point noise of a term that is exactly 0 (identical responses) reads as 0.
  const scale = Math.max(1, ...ys.map((o) => Math.abs(o.y)));
  const clean = (x: number): number => (Math.abs(x) < 1e-9 * scale ? 0 : x);
  return {
    ok: true,
    fit: {
      n: ys.length,
      dfResid: m.df_resid,
      intercept: m.coef[0]!,
      residualSd: m.t.sigmaHat,
      coding: [
        { factor: names[0], low: ca.low, high: ca.high },
        { factor: names[1], low: cb.low, high: cb.high },
      ],
      effects: terms.map((term, i) => ({
        term,
        kind: i < 2 ? 'main' : 'interaction',
        estimate: clean(2 * m.coef[i + 1]!),
        se: clean(2 * m.t.se[i + 1]!),
        ci95: [clean(2 * m.t.interval95[i + 1]![0]), clean(2 * m.t.interval95[i + 1]![1])] as const,
      })),
    },
  };
}
