import { z } from 'zod';
import { onOffArrivals } from '../../../bench/arrival/onOff.js';
import { seededRng } from '../../../foundation/rng.js';
import { positiveDuration, rate } from '../../../foundation/fields.js';
import { arrivalGenerator, arrivalShape, resolveRate, type PlannedArrival } from './kind.js';

/** `onOff:` bursty load, a two-state Markov-modulated Poisson process. */
export interface OnOffPlan {
  readonly kind: 'onOff';
  readonly onMs: number;
  readonly offMs: number;
  readonly onPerS: number;
  readonly offPerS: number;
}

const meanPerS = (a: OnOffPlan): number => (a.onMs * a.onPerS + a.offMs * a.offPerS) / (a.onMs + a.offMs);

export const onOff = {
  shape: arrivalShape({
    schema: z.strictObject({
      on: positiveDuration(),
      off: positiveDuration(),
      rateOn: rate,
      rateOff: rate.optional(),
    }),
    poissonOnly: 'onOff is a Poisson process (Markov-modulated); use arrival: poisson',
    notSpikeable: () => 'onOff',
    plan(o, _law, ctx): PlannedArrival<OnOffPlan> {
      const arrival: OnOffPlan = {
        kind: 'onOff',
        onMs: o.on * ctx.scale,
        offMs: o.off * ctx.scale,
        onPerS: resolveRate(o.rateOn, ctx.capacityPerS),
        offPerS: o.rateOff ? resolveRate(o.rateOff, ctx.capacityPerS) : 0,
      };
      return {
        model: 'open',
        arrival,
        meanPerS: meanPerS(arrival),
        peakPerS: Math.max(arrival.onPerS, arrival.offPerS),
      };
    },
    describe: (o, _law, r) =>
      `open loop, on/off bursts of ${r(o.rateOn)} (${o.rateOff ? r(o.rateOff) : '0/s'} between)`,
    example: '{ on: 2s, off: 3s, rateOn: 200/s, rateOff: 20/s }',
  }),
  generator: arrivalGenerator({
    kind: 'onOff',
    build: (a: OnOffPlan, run) =>
      onOffArrivals({ ...a, startMs: 0, endMs: run.totalMs }, seededRng(run.seed, 'arrivals')),
    expectedOrigins: (a: OnOffPlan, span) => meanPerS(a) * ((span.endMs - span.startMs) / 1000),
    expectedArrivals(a: OnOffPlan, span) {
      // The periods are random: this follows a cycle of the mean on and off lengths, in 10 ms steps.
      let n = 0;
      const period = a.onMs + a.offMs;
      for (let t = span.startMs; t < span.endMs; t += 10)
        n += (t % period < a.onMs ? a.onPerS : a.offPerS) * 0.01;
      return n;
    },
  }),
};
