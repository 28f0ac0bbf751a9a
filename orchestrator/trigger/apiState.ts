import { BenchError } from '../../foundation/errors.js';
import type { ApiState } from '../../services/api/apiState.js';
import type { Lab, UndoRecipe } from '../lab/Lab.js';
import { replicaIndices, targetOf, type Target } from '../lab/target.js';
import type { TriggerContext, TriggerIssue } from './kind.js';
import type { Trigger } from './Trigger.js';
import { putState } from './putState.js';

/**
 * The capacity triggers (slowdown, workers) act through the api's run-time switch: each
 * replica's /_api/state over HTTP on the local, Docker and swarm runtimes, the lab's
 * apiControl in the simulation. The undo is `{ reset: true }`, the api as declared, so the
 * journal's recipe needs nothing the trigger learnt while applying.
 */

const stateUrl = (base: string): string => `${base.replace(/\/+$/, '')}/_api/state`;

function replicasOf(lab: Lab, target: Target): number[] {
  try {
    return replicaIndices(targetOf(target), lab.apiUrls.length);
  } catch (err) {
    throw new BenchError('E_LAB', (err as Error).message);
  }
}

async function setState(lab: Lab, target: Target, state: ApiState): Promise<void> {
  for (const i of replicasOf(lab, target)) {
    if (lab.apiControl) {
      await lab.apiControl.setState(i, state);
      continue;
    }
    await putState(stateUrl(lab.apiUrls[i]!), state, 'the api', `take ${JSON.stringify(state)}`);
  }
}

/** A trigger that sets `state` on the api replicas `target` names, and resets them after. */
export function apiStateTrigger(kind: string, target: Target, state: ApiState, words: string): Trigger {
  return {
    kind,
    target,
    describe: () => words,
    undoRecipe: (lab): UndoRecipe => {
      if (lab.apiControl) return { kind: 'none', what: `${words}: undone with the simulation` };
      const steps: UndoRecipe[] = replicasOf(lab, target).map((i) => ({
        kind: 'http',
        method: 'POST',
        url: stateUrl(lab.apiUrls[i]!),
        body: { reset: true },
        what: `bring api replica ${i} back to its declared work and workers`,
      }));
      return steps.length === 1 ? steps[0]! : { kind: 'steps', steps, what: `undo ${words}` };
    },
    apply: (lab) => setState(lab, target, state),
    undo: (lab) => setState(lab, target, { reset: true }),
  };
}

/** Where the api has no run-time switch: a reference server's or your own system's. */
export function apiStateIssues(kind: string, ctx: TriggerContext): TriggerIssue[] {
  const server = ctx.lab.api.server;
  return server === undefined
    ? []
    : [
        {
          field: 'kind',
          message: `a ${kind} trigger uses the built-in api's run-time switch (/_api/state), which the ${server} reference server does not have: pause, kill or a command on it instead`,
        },
      ];
}

/** `api` or `api[i]`: the capacity triggers act on the built-in api only. */
export const apiTarget = (s: string): boolean => /^api(\[(0|[1-9][0-9]*)\])?$/.test(s);
