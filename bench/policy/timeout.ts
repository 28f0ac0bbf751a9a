import type { ClientPolicy } from './ClientPolicy.js';

/**
 * Gives each attempt `timeoutMs`, cut short by the origin's deadline. When its timer
 * fires it aborts the attempt below and reports `timeout` (or `deadline-exceeded` when
 * the deadline, not the attempt timeout, was the limit). The endMs of a timed-out
 * attempt is the moment the timer fired, not when the transport noticed.
 */
export function attemptTimeout(timeoutMs: number): ClientPolicy {
  return (next, env) => async (attempt, signal) => {
    const startMs = env.clock.now();
    const limitMs = Math.min(startMs + timeoutMs, attempt.origin.deadlineMs);
    const byDeadline = attempt.origin.deadlineMs < startMs + timeoutMs;
    const ctl = env.newController?.() ?? new AbortController();
    let firedAtMs = -1;
    const cancel = env.clock.timer(limitMs, () => {
      firedAtMs = env.clock.now();
      ctl.abort();
    });
    const onOuterAbort = (): void => ctl.abort();
    signal.addEventListener('abort', onOuterAbort, { once: true });
    try {
      const r = await next(attempt, ctl.signal);
      if (firedAtMs >= 0 && r.kind !== 'ok') {
        return { ...r, kind: byDeadline ? 'deadline-exceeded' : 'timeout', status: 0, endMs: firedAtMs };
      }
      return r;
    } finally {
      cancel();
      signal.removeEventListener('abort', onOuterAbort);
    }
  };
}
