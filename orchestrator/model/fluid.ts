import type { DurationDist } from '../../foundation/distributions.js';
import { erlangC } from './queueing.js';

/**
 * The fluid (mean-field) model of a retry-sustained overload, for the api of the lab:
 * c workers with service time S (mean 1/μ, FIFO, work never cancelled), clients with a
 * per-attempt timeout τ and m attempts in all, retrying at once (or after any backoff:
 * deferring an attempt changes when it comes, not how many come), open-loop origins at
 * λ per second. Derived for research/metastability.md §10; validated by simulation
 * (orchestrator/model/model.test.ts).
 *
 * Two steady states can exist:
 *
 * - Healthy: attempts arrive at Λ < cμ and each times out with probability p(Λ), the
 *   chance that its sojourn (queue wait + service) exceeds τ in a stationary M/M/c-like
 *   queue fed at Λ (the mean-field step: the merged stream of first attempts and
 *   retries is taken as Poisson). An origin then makes 1 + p + … + p^{m−1} attempts,
 *   so the fixed point is Λ = λ·(1 − p^m)/(1 − p), written λ = h(Λ) with
 *   h(Λ) = Λ·(1 − p(Λ))/(1 − p(Λ)^m).
 *
 * - Collapsed: the queue is long, every attempt times out (p = 1), so each origin makes
 *   all m attempts, and the server is offered m·λ. Since the api finishes (and wastes)
 *   every attempt it receives, the queue keeps growing exactly when m·λ > cμ.
 *
 * Lower edge, λ_low = cμ/m: below it the collapsed state cannot sustain itself (even
 * when every attempt times out the api receives less than it can do, so the backlog
 * drains and goodput returns); any trigger is survived (OSDI '22 Thm 2's stable region
 * with w_L* = m).
 *
 * Upper edge, λ* = max over Λ in [0, cμ) of h(Λ): the largest origin rate that still
 * has a healthy fixed point. h rises with Λ while timeouts are rare (h ≈ Λ), then falls
 * to cμ/m as Λ → cμ (p → 1, each origin needs m attempts); its maximum is where adding
 * load starts to create more retries than it adds origins. Above λ* no healthy state
 * is left (a saddle-node: the healthy fixed point meets the unstable one and both
 * vanish), so the system collapses without a trigger, from ordinary fluctuations.
 *
 * Between the edges, cμ/m ≤ λ < λ*, both states are stable: the system is bistable
 * (Bronson et al.'s vulnerable state), healthy until a trigger pushes it past the
 * unstable fixed point, then collapsed for good — metastable. Not modelled: backoff's
 * transient, budgets, breakers, throttling, hedging, deadlines, caches; the timeouts of
 * the api itself (queue-time shedding, request timeout) which cap the collapse.
 */
export interface FluidSystem {
  readonly workers: number;
  readonly work: DurationDist;
  readonly timeoutMs: number;
  readonly attempts: number;
}

export interface BistableRange {
  /** cμ, origins (or attempts) per second. */
  readonly capacityPerS: number;
  /** cμ/m: below it every trigger is survived. */
  readonly lowerPerS: number;
  /** λ*: above it there is no healthy state left. */
  readonly upperPerS: number;
  /** The attempt rate Λ at which h(Λ) peaks (the healthy state at λ*). */
  readonly attemptsAtUpperPerS: number;
  /** The range is not empty (one attempt: never). */
  readonly bistable: boolean;
}

/** Squared coefficient of variation of the work distribution. */
function scv(d: DurationDist): number {
  switch (d.dist) {
    case 'constant':
      return 0;
    case 'exponential':
      return 1;
    case 'lognormal':
      return Math.exp(d.sigma * d.sigma) - 1;
  }
}

/** P(S ≥ t) of the work distribution. */
function workTail(d: DurationDist, t: number): number {
  switch (d.dist) {
    case 'constant':
      return d.meanMs >= t ? 1 : 0;
    case 'exponential':
      return Math.exp(-t / d.meanMs);
    case 'lognormal': {
      if (t <= 0) return 1;
      const mu = Math.log(d.meanMs) - (d.sigma * d.sigma) / 2;
      return 1 - normalCdf((Math.log(t) - mu) / d.sigma);
    }
  }
}

/** The lognormal work's density (per ms). */
function lognormalPdf(d: { meanMs: number; sigma: number }, t: number): number {
  if (t <= 0) return 0;
  const mu = Math.log(d.meanMs) - (d.sigma * d.sigma) / 2;
  const z = (Math.log(t) - mu) / d.sigma;
  return Math.exp(-0.5 * z * z) / (t * d.sigma * Math.sqrt(2 * Math.PI));
}

/**
 * P(sojourn > τ) for attempts arriving at `attemptsPerS`: the queue wait is 0 with
 * probability 1 − C, else exponential with rate θ = cμ − Λ (M/M/c, exact for
 * exponential work), θ scaled by 2/(1 + c_s²) for other work (Allen–Cunneen, exact for
 * the mean of M/D/1); the service time S is added: P(S ≥ τ) + E[C·e^{−θ(τ − S)}; S < τ]
 * (in closed form for exponential and constant work, by Simpson's rule for lognormal).
 * 1 when Λ ≥ cμ.
 */
export function timeoutProbability(sys: FluidSystem, attemptsPerS: number): number {
  const d = sys.work;
  const meanMs = d.meanMs;
  const c = sys.workers;
  const tau = sys.timeoutMs;
  const lambdaMs = attemptsPerS / 1000;
  const a = lambdaMs * meanMs;
  if (!(a < c)) return 1;
  const C = a > 0 ? erlangC(c, a) : 0;
  const theta = ((c / meanMs - lambdaMs) * 2) / (1 + scv(d));
  let p: number;
  switch (d.dist) {
    case 'constant':
      p = meanMs >= tau ? 1 : C * Math.exp(-theta * (tau - meanMs));
      break;
    case 'exponential': {
      const mu = 1 / meanMs;
      p =
        Math.abs(theta - mu) < 1e-12 * mu
          ? Math.exp(-mu * tau) * (1 + C * mu * tau)
          : Math.exp(-mu * tau) + ((C * mu) / (theta - mu)) * (Math.exp(-mu * tau) - Math.exp(-theta * tau));
      break;
    }
    case 'lognormal': {
      const n = 4000; // even
      const step = tau / n;
      let sum = 0;
      for (let i = 0; i <= n; i++) {
        const t = i * step;
        const w = i === 0 || i === n ? 1 : i % 2 === 1 ? 4 : 2;
        sum += w * lognormalPdf(d, t) * Math.exp(-theta * (tau - t));
      }
      p = workTail(d, tau) + (C * sum * step) / 3;
      break;
    }
  }
  return Math.min(1, Math.max(0, p));
}

/** Attempts per origin when each times out with probability p: 1 + p + … + p^{m−1}. */
export function attemptsPerOrigin(p: number, m: number): number {
  return p >= 1 ? m : (1 - p ** m) / (1 - p);
}

/** h(Λ) = Λ / attemptsPerOrigin(p(Λ)): the origin rate whose healthy state offers Λ. */
function h(sys: FluidSystem, attemptsPerS: number): number {
  return attemptsPerS / attemptsPerOrigin(timeoutProbability(sys, attemptsPerS), sys.attempts);
}

export function bistableRange(sys: FluidSystem): BistableRange {
  const capacityPerS = (sys.workers / sys.work.meanMs) * 1000;
  const lowerPerS = capacityPerS / sys.attempts;
  // h on a grid dense near cμ (where it peaks when τ is many service times), then refined.
  let best = 0;
  let bestL = 0;
  const probe = (L: number): void => {
    const v = h(sys, L);
    if (v > best) {
      best = v;
      bestL = L;
    }
  };
  for (let i = 1; i <= 400; i++) probe((capacityPerS * i) / 401);
  for (let x = 0.5; x <= 7; x += 0.02) probe(capacityPerS * (1 - 10 ** -x));
  // Golden-section search around the best grid point.
  let lo = Math.max(0, bestL - capacityPerS / 200);
  let hi = Math.min(capacityPerS * (1 - 1e-9), bestL + capacityPerS / 200);
  const g = (Math.sqrt(5) - 1) / 2;
  for (let k = 0; k < 80; k++) {
    const x1 = hi - g * (hi - lo);
    const x2 = lo + g * (hi - lo);
    if (h(sys, x1) > h(sys, x2)) hi = x2;
    else lo = x1;
  }
  probe((lo + hi) / 2);
  const upperPerS = sys.attempts > 1 ? best : capacityPerS;
  return {
    capacityPerS,
    lowerPerS,
    upperPerS,
    attemptsAtUpperPerS: sys.attempts > 1 ? bestL : capacityPerS,
    bistable: sys.attempts > 1 && upperPerS > lowerPerS,
  };
}

/**
 * The healthy state at origin rate λ: the smallest fixed point of Λ = λ·(attempts per
 * origin at p(Λ)), found by iterating from Λ = λ (it increases to it); null when there is
 * none (λ above the upper edge, or at or above capacity).
 */
export function healthyState(
  sys: FluidSystem,
  originsPerS: number,
): { attemptsPerS: number; timeoutProbability: number } | null {
  const capacityPerS = (sys.workers / sys.work.meanMs) * 1000;
  let L = originsPerS;
  for (let k = 0; k < 10_000; k++) {
    if (!(L < capacityPerS)) return null;
    const p = timeoutProbability(sys, L);
    const next = originsPerS * attemptsPerOrigin(p, sys.attempts);
    if (Math.abs(next - L) <= 1e-9 * capacityPerS) return { attemptsPerS: next, timeoutProbability: p };
    L = next;
  }
  return null;
}

/** Φ, by the complementary error function (Numerical Recipes' erfc, |error| < 1.2e-7). */
export function normalCdf(x: number): number {
  const z = Math.abs(x) / Math.SQRT2;
  const t = 1 / (1 + 0.5 * z);
  const erfc =
    t *
    Math.exp(
      -z * z -
        1.26551223 +
        t *
          (1.00002368 +
            t *
              (0.37409196 +
                t *
                  (0.09678418 +
                    t *
                      (-0.18628806 +
                        t *
                          (0.27886807 +
                            t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    );
  return x >= 0 ? 1 - erfc / 2 : erfc / 2;
}
