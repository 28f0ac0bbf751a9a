import type { Rng } from '../../foundation/rng.js';
import { exponential } from '../../foundation/distributions.js';
import type { ArrivalProcess } from './ArrivalProcess.js';

/**
 * A two-state Markov-modulated Poisson process: "on" periods (mean `onMs`, rate
 * `onPerS`) alternate with "off" periods (mean `offMs`, rate `offPerS`), each period's
 * length exponential. Bursty: its counts are overdispersed (variance > mean) while its
 * long-run rate is (on·onRate + off·offRate) / (on + off). It starts in the on state.
 */
export function onOffArrivals(
  o: { onMs: number; offMs: number; onPerS: number; offPerS: number; startMs: number; endMs: number },
  rng: Rng,
): ArrivalProcess {
  let on = true;
  let t = o.startMs;
  let switchAt = o.startMs + exponential(o.onMs, rng);
  const meanRate = (o.onMs * o.onPerS + o.offMs * o.offPerS) / (o.onMs + o.offMs);
  return {
    next() {
      for (;;) {
        const r = on ? o.onPerS : o.offPerS;
        const cand = r > 0 ? t + exponential(1000 / r, rng) : Number.POSITIVE_INFINITY;
        if (cand < switchAt) {
          t = cand;
          return t < o.endMs ? t : undefined;
        }
        // Memoryless: restart the clock at the switch in the new state.
        t = switchAt;
        if (t >= o.endMs) return undefined;
        on = !on;
        switchAt = t + exponential(on ? o.onMs : o.offMs, rng);
      }
    },
    rate: () => meanRate,
    describe: () =>
      `on/off: ${o.onPerS}/s for ~${o.onMs / 1000} s, ${o.offPerS}/s for ~${o.offMs / 1000} s (mean ${meanRate.toFixed(1)}/s)`,
  };
}
