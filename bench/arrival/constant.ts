import type { ArrivalProcess } from './ArrivalProcess.js';

/** Evenly spaced arrivals: request i at start + i / rate, computed (not accumulated) so it never drifts. */
export function constantArrivals(ratePerS: number, startMs: number, endMs: number): ArrivalProcess {
  let i = 0;
  return {
    next() {
      const t = startMs + (i * 1000) / ratePerS;
      if (!(ratePerS > 0) || t >= endMs) return undefined;
      i++;
      return t;
    },
    rate: (tMs) => (tMs >= startMs && tMs < endMs ? ratePerS : 0),
    describe: () => `constant ${ratePerS}/s from ${startMs / 1000} s to ${endMs / 1000} s`,
  };
}
