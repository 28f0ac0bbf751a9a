import { z } from 'zod';
import { wavesArrivals } from '../../../bench/arrival/waves.js';
import { seededRng } from '../../../foundation/rng.js';
import { positiveDuration, rate } from '../../../foundation/fields.js';
import { arrivalGenerator, arrivalShape, resolveRate, type PlannedArrival } from './kind.js';

/** `waves:` a sinusoidal Poisson process, mean ± amplitude every period. */
export interface WavesPlan {
  readonly kind: 'waves';
  readonly meanPerS: number;
  readonly amplitudePerS: number;
  readonly periodMs: number;
}

export const waves = {
  shape: arrivalShape({
    schema: z.strictObject({ mean: rate, amplitude: rate, period: positiveDuration() }),
    poissonOnly: 'waves are generated as a Poisson process; use arrival: poisson',
    notSpikeable: () => 'waves',
    plan(w, _law, ctx): PlannedArrival<WavesPlan> {
      const meanPerS = resolveRate(w.mean, ctx.capacityPerS);
      const amplitudePerS = resolveRate(w.amplitude, ctx.capacityPerS);
      return {
        model: 'open',
        arrival: { kind: 'waves', meanPerS, amplitudePerS, periodMs: w.period * ctx.scale },
        meanPerS,
        peakPerS: meanPerS + amplitudePerS,
      };
    },
    describe: (w, _law, r) => `open loop, Poisson waves around ${r(w.mean)} ± ${r(w.amplitude)}`,
    example: '{ mean: 100/s, amplitude: 40/s, period: 10s }',
  }),
  generator: arrivalGenerator({
    kind: 'waves',
    build: (a: WavesPlan, run) =>
      wavesArrivals({ ...a, startMs: 0, endMs: run.totalMs }, seededRng(run.seed, 'arrivals')),
    expectedOrigins: (a: WavesPlan, span) => a.meanPerS * ((span.endMs - span.startMs) / 1000),
    expectedArrivals(a: WavesPlan, { startMs, endMs }) {
      // The integral of mean + amplitude·sin(2πt/period) over the span.
      const w = (2 * Math.PI) / a.periodMs;
      const cos = (t: number): number => Math.cos(w * t);
      return (
        (a.meanPerS * (endMs - startMs)) / 1000 + ((a.amplitudePerS / w) * (cos(startMs) - cos(endMs))) / 1000
      );
    },
  }),
};
