import { z } from 'zod';
import { multiple } from '../../../foundation/fields.js';
import { notSpikeable } from '../../spec/loadPlan.js';
import { defineTrigger, timing } from '../kind.js';

/**
 * A load spike: the offered rate times `factor`. It acts on the load, not on the lab:
 * the run plan has already multiplied the arrival profile over the spike's span (so
 * arrivals stay exact and seeded, spec/plan.ts); this trigger only marks its start and end.
 */
export const loadSpike = defineTrigger({
  kind: 'load-spike',
  schema: z.strictObject({ kind: z.literal('load-spike'), factor: multiple, ...timing }),
  summary: "The offered rate times `factor` for the duration (the open loop's rate; not for a closed loop).",
  acts: 'load',
  magnitude: 'factor',
  target: () => 'load',
  targetField: 'kind',
  validate: (_t, { load }) => {
    const notProfile = notSpikeable(load);
    return notProfile === undefined
      ? []
      : [
          {
            field: 'kind',
            message: `a load spike multiplies a flat, phased or per-second-replayed rate; this load is ${notProfile}`,
          },
        ];
  },
  describe: (t, d) => `load spike x${t.factor} for ${d}`,
  create: ({ factor }) => ({
    kind: 'load-spike',
    target: 'load',
    describe: () => `load spike x${factor}`,
    undoRecipe: () => ({ kind: 'none', what: `load spike x${factor} (the load ends with the run)` }),
    apply: async () => undefined,
    undo: async () => undefined,
  }),
});
