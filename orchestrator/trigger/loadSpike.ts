import type { Trigger } from './Trigger.js';

/**
 * A load spike: the offered rate times `factor`. It acts on the load, not on the lab:
 * the run plan has already multiplied the arrival profile over the spike's span (so
 * arrivals stay exact and seeded); this trigger only marks its start and end.
 */
export function loadSpikeTrigger(factor: number): Trigger {
  return {
    kind: 'load-spike',
    target: 'load',
    describe: () => `load spike x${factor}`,
    undoRecipe: () => ({ kind: 'none', what: `load spike x${factor} (the load ends with the run)` }),
    apply: async () => undefined,
    undo: async () => undefined,
  };
}
