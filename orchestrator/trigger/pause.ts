import type { Target } from '../lab/Lab.js';
import type { Trigger } from './Trigger.js';

/** Freezes a component (or one api replica, `api[1]`) for the trigger's duration: it answers nothing, and nothing detects it. */
export function pauseTrigger(target: Target): Trigger {
  return {
    kind: 'pause',
    target,
    describe: () => `pause ${target}`,
    undoRecipe: (lab) => lab.pauseUndoRecipe(target),
    apply: (lab) => lab.pause(target),
    undo: (lab) => lab.resume(target),
  };
}
