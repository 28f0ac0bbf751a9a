import type { Rng } from '../rng.js';
import { exponential } from '../distributions.js';
import type { ArrivalProcess } from './ArrivalProcess.js';

/** A homogeneous Poisson process: independent exponential gaps with mean 1 / rate. */
export function poissonArrivals(ratePerS: number, startMs: number, endMs: number, rng: Rng): ArrivalProcess {
  const meanGapMs = 1000 / ratePerS;
  let t = startMs;
  return {
    next() {
      if (!(ratePerS > 0)) return undefined;
      t += exponential(meanGapMs, rng);
      return t < endMs ? t : undefined;
    },
    rate: (tMs) => (tMs >= startMs && tMs < endMs ? ratePerS : 0),
    describe: () => `poisson ${ratePerS}/s from ${startMs / 1000} s to ${endMs / 1000} s`,
  };
}
