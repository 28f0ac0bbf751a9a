import { z } from 'zod';
import { defineTrigger, target, timing } from '../kind.js';

/** Freezes a component (or one api replica, `api[1]`) for the trigger's duration: it answers nothing, and nothing detects it. */
export const pause = defineTrigger({
  kind: 'pause',
  schema: z.strictObject({ kind: z.literal('pause'), target, ...timing }),
  summary: 'Freezes the component (SIGSTOP / docker pause): it keeps its sockets and answers nothing.',
  acts: 'process',
  target: (t) => t.target,
  describe: (t, d) => `pause ${t.target} for ${d}`,
  create: (t) => ({
    kind: 'pause',
    target: t.target,
    describe: () => `pause ${t.target}`,
    undoRecipe: (lab) => lab.pauseUndoRecipe(t.target),
    apply: (lab) => lab.pause(t.target),
    undo: (lab) => lab.resume(t.target),
  }),
});
