import { z } from 'zod';
import { defineTrigger, target, timing } from '../kind.js';

/**
 * Kills a component (SIGKILL / docker kill: its queue and in-flight work are lost) and
 * starts it again when the trigger ends, unless `restart` is false (then it stays down
 * for the rest of the run: does the system have a degraded mode?).
 */
export const kill = defineTrigger({
  kind: 'kill',
  schema: z.strictObject({ kind: z.literal('kill'), target, restart: z.boolean().default(true), ...timing }),
  summary: 'SIGKILL: the queue and in-flight work are lost; restarted at the end unless restart: false.',
  acts: 'process',
  target: (t) => t.target,
  describe: (t, d) =>
    `kill ${t.target}, ${t.restart ? `restarted after ${d}` : `not restarted (${d} counted as the trigger)`}`,
  create: ({ target, restart }) => ({
    kind: 'kill',
    target,
    restarts: restart,
    effectAtIssue: true,
    describe: () => `kill ${target}${restart ? ' (restarted at the end)' : ' (not restarted)'}`,
    undoRecipe: (lab) => lab.startUndoRecipe(target),
    apply: (lab) => lab.kill(target),
    undo: async (lab) => {
      if (restart) await lab.start(target);
    },
  }),
});
