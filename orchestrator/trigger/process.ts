import type { Target } from '../lab/Lab.js';
import type { Trigger } from './Trigger.js';

/**
 * Kills a component (SIGKILL / docker kill: its queue and in-flight work are lost) and
 * starts it again when the trigger ends, unless `restart` is false (then it stays down
 * for the rest of the run: does the system have a degraded mode?).
 */
export function killTrigger(target: Target, restart: boolean): Trigger {
  return {
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
  };
}

/** A graceful stop (SIGTERM / docker stop), started again when the trigger ends. */
export function stopTrigger(target: Target): Trigger {
  return {
    kind: 'stop',
    target,
    restarts: true,
    effectAtIssue: true,
    describe: () => `stop ${target}`,
    undoRecipe: (lab) => lab.startUndoRecipe(target),
    apply: (lab) => lab.stop(target),
    undo: (lab) => lab.start(target),
  };
}
