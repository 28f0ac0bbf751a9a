import type { ClientPolicy, PolicyEnv } from './ClientPolicy.js';
import { dispatchOf, sendOf, type SendAttempt } from './dispatch.js';

/**
 * TEMPORARY, until hedge, balance, breaker and throttle are dispatch layers (branch
 * handlers-rest): the promise form those four policies are still written in, and the
 * adapter that puts one in a dispatch stack (a promise and a controller per attempt, as
 * before). Delete this file when they are converted.
 */
export type LegacyPolicy = (next: SendAttempt, env: PolicyEnv) => SendAttempt;

/** A promise-form policy as a dispatch layer. TEMPORARY (see above). */
export function legacyPolicy(p: LegacyPolicy): ClientPolicy {
  return (next, env) => dispatchOf(p(sendOf(next), env), env.newController);
}
