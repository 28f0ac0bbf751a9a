import type { Rng } from './rng.js';

/** A distribution of durations in milliseconds, as declared in an experiment. */
export type DurationDist =
  | { readonly dist: 'constant'; readonly meanMs: number }
  | { readonly dist: 'exponential'; readonly meanMs: number }
  /** sigma is the standard deviation of the underlying normal (log space). */
  | { readonly dist: 'lognormal'; readonly meanMs: number; readonly sigma: number };

export function sampleDuration(d: DurationDist, rng: Rng): number {
  switch (d.dist) {
    case 'constant':
      return d.meanMs;
    case 'exponential':
      return exponential(d.meanMs, rng);
    case 'lognormal': {
      // Parameterised by its mean: E[X] = exp(mu + sigma^2/2).
      const mu = Math.log(d.meanMs) - (d.sigma * d.sigma) / 2;
      return Math.exp(mu + d.sigma * standardNormal(rng));
    }
  }
}

/** An exponential variate with the given mean (inverse transform; 1 - u avoids log 0). */
export function exponential(mean: number, rng: Rng): number {
  return -Math.log(1 - rng.next()) * mean;
}

/** Box-Muller; one of the pair is discarded to keep the stream position simple. */
export function standardNormal(rng: Rng): number {
  const u1 = 1 - rng.next();
  const u2 = rng.next();
  return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
}

export function describeDuration(d: DurationDist): string {
  return d.dist === 'lognormal'
    ? `lognormal(mean ${d.meanMs} ms, sigma ${d.sigma})`
    : `${d.dist}(mean ${d.meanMs} ms)`;
}
