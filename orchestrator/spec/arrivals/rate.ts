import { rate as rateField } from '../../../foundation/fields.js';
import { arrivalShape, resolveRate } from './kind.js';
import { profilePlan } from './profile.js';

/** `rate: 280/s`: a flat offered rate for the whole run. */
export const rate = {
  shape: arrivalShape({
    schema: rateField,
    notSpikeable: () => undefined,
    plan(r, law, ctx) {
      const perS = resolveRate(r, ctx.capacityPerS);
      return profilePlan(
        [{ durationMs: ctx.totalMs, fromPerS: perS, toPerS: perS }],
        `a flat ${perS}/s`,
        law,
        ctx.totalMs,
      );
    },
    describe: (r, law, show) => `open loop, ${law} arrivals at ${show(r)}`,
    example: '100/s',
  }),
};
