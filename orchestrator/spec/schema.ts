import { z } from 'zod';
import { int } from './fields.js';
import { client } from './sections/client.js';
import { hypothesis } from './sections/hypothesis.js';
import { lab } from './sections/lab.js';
import { load } from './sections/load.js';
import { recovery, schedule } from './sections/schedule.js';

export { HYPOTHESIS_METRICS } from './sections/hypothesis.js';
export { TRIGGER_KINDS, TRIGGER_TARGETS } from './sections/schedule.js';

/**
 * The experiment file's schema, one file per section under sections/. Objects are
 * strict (an unknown key is an error, with a did-you-mean), units are parsed at the
 * edge (fields.ts), and every limit is stated so a typo or an absurd value is refused
 * before anything starts.
 */
export const experimentSchema = z
  .strictObject({
    name: z
      .string()
      .regex(/^[a-z0-9][a-z0-9._-]{0,79}$/, 'use lower-case letters, digits, ".", "_" and "-" (at most 80)'),
    description: z.string().max(2000).optional(),
    lab,
    load,
    client,
    hypothesis: hypothesis.default({}),
    schedule,
    recovery,
    repeat: int(1, 1000).default(1),
    seed: int(0, 2 ** 32 - 1).default(1),
  })
  .superRefine((e, ctx) => {
    // A trigger on the cache or the database needs them in the lab.
    const t = e.schedule.trigger;
    if ((t.target === 'redis' || t.target === 'postgres') && !e.lab.cache)
      ctx.addIssue({
        code: 'custom',
        path: ['schedule', 'trigger', t.kind === 'flush-cache' ? 'kind' : 'target'],
        message: `${t.kind === 'flush-cache' ? 'flush-cache' : `pausing ${t.target}`} needs a cache in the lab (lab.cache and lab.db)`,
      });
    // A request class may only ask for a cost class the api declares.
    e.load.mix?.forEach((c, i) => {
      if (c.cost !== undefined && !e.lab.api.costs?.[c.cost])
        ctx.addIssue({
          code: 'custom',
          path: ['load', 'mix', i, 'cost'],
          message: `no cost class "${c.cost}" in lab.api.costs${e.lab.api.costs ? ` (declared: ${Object.keys(e.lab.api.costs).join(', ')})` : ''}`,
        });
    });
  });

/** An experiment as validated: units already in ms, req/s and fractions. */
export type Experiment = z.output<typeof experimentSchema>;
