import { DEADLINE_HEADER } from '../../foundation/deadlineHeader.js';
import type { ClientPolicy } from './ClientPolicy.js';

export { DEADLINE_HEADER };

/** Adds DEADLINE_HEADER to each attempt. Sits innermost, right above the transport. */
export function propagateDeadline(): ClientPolicy {
  return (next, env) => (attempt, handler) => {
    const d = attempt.origin.deadlineMs;
    if (!Number.isFinite(d)) return next(attempt, handler);
    const leftMs = Math.max(0, Math.floor(d - env.clock.now()));
    return next({ ...attempt, headers: { ...attempt.headers, [DEADLINE_HEADER]: String(leftMs) } }, handler);
  };
}
