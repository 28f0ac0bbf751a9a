import { z } from 'zod';
import { multiple } from '../../../foundation/fields.js';
import { defineTrigger, target, timing } from '../kind.js';
import { apiStateIssues, apiStateTrigger, apiTarget } from '../apiState.js';
import type { Target } from '../../lab/target.js';

/** Capacity degradation with a magnitude: the api's work takes `factor` times as long. */
export const slowdown = defineTrigger({
  kind: 'slowdown',
  schema: z.strictObject({
    kind: z.literal('slowdown'),
    target: target.default('api' as Target).refine(apiTarget, 'a slowdown acts on the api: api or api[i]'),
    factor: multiple.refine((f) => f > 1, 'must be above 1x: a slowdown makes the work longer'),
    ...timing,
  }),
  summary:
    "The api's work takes `factor` times as long (its run-time switch), so its capacity falls to 1/factor; queued and running work keep their times.",
  acts: 'capacity',
  magnitude: 'factor',
  target: (t) => t.target,
  validate: (_t, ctx) => apiStateIssues('slowdown', ctx),
  describe: (t, d) => `slow ${t.target}'s work down ${t.factor}x for ${d}`,
  create: (t) =>
    apiStateTrigger(
      'slowdown',
      t.target,
      { workFactor: t.factor },
      `slow ${t.target}'s work down ${t.factor}x`,
    ),
});
