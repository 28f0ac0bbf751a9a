import { z } from 'zod';
import { positiveDuration, rate } from '../../../foundation/fields.js';
import { arrivalShape, resolveRate } from './kind.js';
import { profilePlan } from './profile.js';

/** `phases:` segments with a rate or a linear ramp from → to (ramp / sustain / burst / recover, steps). */
const phase = z.union([
  z.strictObject({ name: z.string().max(40).optional(), duration: positiveDuration(), rate }),
  z.strictObject({ name: z.string().max(40).optional(), duration: positiveDuration(), from: rate, to: rate }),
]);

export const phases = {
  shape: arrivalShape({
    schema: z.array(phase).min(1).max(1000),
    notSpikeable: () => undefined,
    plan(ps, law, ctx) {
      const perS = (r: Parameters<typeof resolveRate>[0]): number => resolveRate(r, ctx.capacityPerS);
      // --scale shrinks phase durations like the schedule (the rates stay as declared).
      const segs = ps.map((p) =>
        'rate' in p
          ? { durationMs: p.duration * ctx.scale, fromPerS: perS(p.rate), toPerS: perS(p.rate) }
          : { durationMs: p.duration * ctx.scale, fromPerS: perS(p.from), toPerS: perS(p.to) },
      );
      return profilePlan(segs, `${ps.length} phases`, law, ctx.totalMs);
    },
    describe: (ps, law, r) =>
      `open loop, ${law} arrivals over ${ps.length} phases (${ps.map((p) => ('rate' in p ? r(p.rate) : `${r(p.from)}→${r(p.to)}`)).join(', ')})`,
    example: '[{ duration: 10s, from: 10/s, to: 100/s }, { name: hold, duration: 20s, rate: 100/s }]',
  }),
};
