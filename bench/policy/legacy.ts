import type { ClientPolicy } from './ClientPolicy.js';
import { dispatchOf, sendOf } from './dispatch.js';
import type { DispatchPolicy } from './dispatchPolicy.js';

/*
 * TEMPORARY: bridges between the promise-form policies (ClientPolicy) and the dispatch
 * form (DispatchPolicy) while the client moves to the dispatch seam one policy at a
 * time. Each bridge costs a promise and a controller per attempt, and adds microtask
 * hops; this file goes once every policy and the wiring dispatch natively.
 */

/** A dispatch layer inside a promise-form stack (the registry, until it builds dispatch stacks). */
export function promisePolicy(p: DispatchPolicy): ClientPolicy {
  return (next, env) => sendOf(p(dispatchOf(next, env.newController), env));
}

/** A promise-form layer inside a dispatch stack (tests mixing converted and unconverted policies). */
export function dispatchPolicy(p: ClientPolicy): DispatchPolicy {
  return (next, env) => dispatchOf(p(sendOf(next), env), env.newController);
}
