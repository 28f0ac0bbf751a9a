import type { ArrivalProcess } from './ArrivalProcess.js';

/** Replays recorded arrival times (ms since start, any order); those at or past `endMs` are dropped. */
export function replayArrivals(timesMs: readonly number[], endMs = Number.POSITIVE_INFINITY): ArrivalProcess {
  const ts = Float64Array.from(timesMs.filter((t) => t >= 0 && t < endMs)).sort();
  let i = 0;
  return {
    next: () => (i < ts.length ? ts[i++] : undefined),
    rate(tMs) {
      // Arrivals within the surrounding second, for plots.
      let lo = 0;
      let hi = ts.length;
      const a = Math.floor(tMs / 1000) * 1000;
      while (lo < hi) {
        const m = (lo + hi) >> 1;
        if (ts[m]! < a) lo = m + 1;
        else hi = m;
      }
      let n = 0;
      for (let j = lo; j < ts.length && ts[j]! < a + 1000; j++) n++;
      return n;
    },
    describe: () => `replay of ${ts.length} recorded arrivals`,
  };
}
