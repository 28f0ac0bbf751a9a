import { z } from 'zod';
import { defineTrigger, target, timing } from '../kind.js';
import { apiStateIssues, apiStateTrigger, apiTarget } from '../apiState.js';
import type { Target } from '../../lab/target.js';

/** Capacity degradation with a magnitude: the api's pool shrunk to `to` workers. */
export const workers = defineTrigger({
  kind: 'workers',
  schema: z.strictObject({
    kind: z.literal('workers'),
    target: target
      .default('api' as Target)
      .refine(apiTarget, 'a workers trigger acts on the api: api or api[i]'),
    /** Workers left in the pool for the window. */
    to: z.number().int().min(1),
    ...timing,
  }),
  summary:
    "The api's pool shrinks to `to` workers (its run-time switch): a busy worker finishes its job first; the pool grows back when the trigger ends.",
  acts: 'capacity',
  magnitude: 'to',
  target: (t) => t.target,
  validate: (t, ctx) => [
    ...apiStateIssues('workers', ctx),
    ...(t.to >= ctx.lab.api.workers
      ? [
          {
            field: 'to',
            message: `must be below lab.api.workers (${ctx.lab.api.workers}): a pool of ${t.to} is no loss of capacity`,
          },
        ]
      : []),
  ],
  describe: (t, d) => `shrink ${t.target}'s pool to ${t.to} workers for ${d}`,
  create: (t) =>
    apiStateTrigger('workers', t.target, { workers: t.to }, `shrink ${t.target}'s pool to ${t.to} workers`),
});
