import type { ClientPolicy } from './ClientPolicy.js';

/**
 * The header that carries an origin's remaining deadline on every attempt:
 *
 *   x-deadline-ms: <whole milliseconds left until the origin's deadline, at the moment
 *                   this attempt is sent; floor, never negative>
 *
 * Absent when the origin has no deadline. Relative (not an absolute time) so that
 * client and server need no shared clock; a server that honours it drops the request
 * once that many ms have passed since it arrived (queue wait included), because the
 * client will no longer use the answer. Retries and hedges carry what is left then.
 */
export const DEADLINE_HEADER = 'x-deadline-ms';

/** Adds DEADLINE_HEADER to each attempt. Sits innermost, right above the transport. */
export function propagateDeadline(): ClientPolicy {
  return (next, env) => (attempt, signal) => {
    const d = attempt.origin.deadlineMs;
    if (!Number.isFinite(d)) return next(attempt, signal);
    const leftMs = Math.max(0, Math.floor(d - env.clock.now()));
    return next({ ...attempt, headers: { ...attempt.headers, [DEADLINE_HEADER]: String(leftMs) } }, signal);
  };
}
