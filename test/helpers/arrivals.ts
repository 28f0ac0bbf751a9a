import type { ArrivalProcess } from '../../bench/arrival/ArrivalProcess.js';
import { RateProfile } from '../../bench/arrival/profile.js';
import { profiledArrivals } from '../../bench/arrival/profiled.js';
import { seededRng, type Rng } from '../../foundation/rng.js';

/**
 * Arrivals at one flat rate over [startMs, endMs), built the way a run builds them (a
 * one-segment rate profile): `constant` places the n-th at startMs + n / rate, `poisson`
 * draws exponential gaps from `rng`.
 */
export function flatArrivals(
  law: 'constant' | 'poisson',
  ratePerS: number,
  startMs: number,
  endMs: number,
  rng: Rng = seededRng(0, 'arrivals'),
): ArrivalProcess {
  const profile = new RateProfile(
    [{ durationMs: endMs - startMs, fromPerS: ratePerS, toPerS: ratePerS }],
    startMs,
  );
  return profiledArrivals(profile, law, rng);
}
