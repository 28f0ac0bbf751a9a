import type { Trigger } from './Trigger.js';

/**
 * Empties the cache at once (Redis FLUSHALL): every key misses until refilled. The
 * flush itself has nothing to undo; what is studied is whether the cache can refill.
 */
export function flushCacheTrigger(): Trigger {
  return {
    kind: 'flush-cache',
    target: 'redis',
    describe: () => 'flush the cache',
    undoRecipe: () => ({ kind: 'none', what: 'flush the cache (nothing to undo)' }),
    apply: (lab) => lab.flushCache(),
    undo: async () => undefined,
  };
}
