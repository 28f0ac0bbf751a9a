import { z } from 'zod';
import { defineTrigger, target, timing } from '../kind.js';

/** A graceful stop (SIGTERM / docker stop), started again when the trigger ends. */
export const stop = defineTrigger({
  kind: 'stop',
  schema: z.strictObject({ kind: z.literal('stop'), target, ...timing }),
  summary: 'Graceful stop (SIGTERM), started again at the end.',
  acts: 'process',
  target: (t) => t.target,
  describe: (t, d) => `stop ${t.target} for ${d}`,
  create: ({ target }) => ({
    kind: 'stop',
    target,
    restarts: true,
    effectAtIssue: true,
    describe: () => `stop ${target}`,
    undoRecipe: (lab) => lab.startUndoRecipe(target),
    apply: (lab) => lab.stop(target),
    undo: (lab) => lab.start(target),
  }),
});
