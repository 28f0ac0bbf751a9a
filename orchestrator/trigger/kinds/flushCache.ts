import { z } from 'zod';
import { defineTrigger, timing } from '../kind.js';

/**
 * Empties the cache at once (Redis FLUSHALL): every key misses until refilled. The
 * flush itself has nothing to undo; what is studied is whether the cache can refill.
 */
export const flushCache = defineTrigger({
  kind: 'flush-cache',
  schema: z.strictObject({
    kind: z.literal('flush-cache'),
    target: z.literal('redis').default('redis'),
    ...timing,
  }),
  summary: 'Empties the cache (Redis FLUSHALL) at once.',
  acts: 'cache',
  target: (t) => t.target,
  // Its target is implied: a cache missing from the lab is the kind's problem.
  targetField: 'kind',
  instant: true,
  describe: (_t, d) => `flush the cache (counted as ${d})`,
  create: () => ({
    kind: 'flush-cache',
    target: 'redis',
    describe: () => 'flush the cache',
    undoRecipe: () => ({ kind: 'none', what: 'flush the cache (nothing to undo)' }),
    apply: (lab) => lab.flushCache(),
    undo: async () => undefined,
  }),
});
