import type { Rng } from '../../foundation/rng.js';
import { exponential } from '../../foundation/distributions.js';
import type { ArrivalProcess } from './ArrivalProcess.js';
import type { RateProfile } from './profile.js';

/**
 * Arrivals that follow a rate profile exactly:
 * - `poisson`: a non-homogeneous Poisson process by time rescaling (unit-rate Poisson
 *   points mapped through Λ⁻¹), so its count over any span is Poisson with mean ∫λ;
 * - `constant`: the n-th arrival at Λ⁻¹(n), evenly spaced in expected-arrival units, so
 *   a span offers ∫λ requests to within one.
 */
export function profiledArrivals(
  profile: RateProfile,
  law: 'poisson' | 'constant',
  rng: Rng,
  label = 'profile',
): ArrivalProcess {
  let n = 0;
  let x = 0;
  return {
    next() {
      if (law === 'constant') return profile.inverse(n++);
      x += exponential(1, rng);
      return profile.inverse(x);
    },
    rate: (tMs) => profile.rate(tMs),
    describe: () =>
      `${law} over ${label}: ${Math.round(profile.total)} expected origins, peak ${profile.peakPerS}/s`,
  };
}
