import type { Rng } from '../../foundation/rng.js';
import { exponential } from '../../foundation/distributions.js';
import type { ArrivalProcess } from './ArrivalProcess.js';

/**
 * A sinusoidal Poisson process ("waves"): λ(t) = mean + amplitude · sin(2π (t − start) / period),
 * generated exactly by thinning a Poisson process at the peak rate (Lewis & Shedler).
 */
export function wavesArrivals(
  o: { meanPerS: number; amplitudePerS: number; periodMs: number; startMs: number; endMs: number },
  rng: Rng,
): ArrivalProcess {
  if (o.amplitudePerS > o.meanPerS)
    throw new RangeError('waves: the amplitude cannot exceed the mean (the rate would go negative)');
  const peak = o.meanPerS + o.amplitudePerS;
  const rate = (tMs: number): number =>
    tMs < o.startMs || tMs >= o.endMs
      ? 0
      : o.meanPerS + o.amplitudePerS * Math.sin((2 * Math.PI * (tMs - o.startMs)) / o.periodMs);
  let t = o.startMs;
  return {
    next() {
      if (!(peak > 0)) return undefined;
      for (;;) {
        t += exponential(1000 / peak, rng);
        if (t >= o.endMs) return undefined;
        if (rng.next() * peak < rate(t)) return t;
      }
    },
    rate,
    describe: () => `waves around ${o.meanPerS}/s ± ${o.amplitudePerS}/s every ${o.periodMs / 1000} s`,
  };
}
