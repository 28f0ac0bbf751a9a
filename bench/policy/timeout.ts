import type { Attempt, AttemptResult } from '../outcome.js';
import type { ClientPolicy, PolicyEnv } from './ClientPolicy.js';
import { CutShort } from './cutShort.js';
import type { AttemptHandler, Dispatch } from './dispatch.js';

/**
 * Gives each attempt `timeoutMs`, cut short by the origin's deadline. When its timer
 * fires it aborts the attempt below and reports `timeout` (or `deadline-exceeded` when
 * the deadline, not the attempt timeout, was the limit). The endMs of a timed-out
 * attempt is the moment the timer fired, not when the transport noticed.
 */
export function attemptTimeout(timeoutMs: number): ClientPolicy {
  return (next, env) => (attempt, handler) => new TimedAttempt(next, env, timeoutMs, attempt, handler);
}

/** One attempt under its timer. */
class TimedAttempt extends CutShort {
  private readonly byDeadline: boolean;

  constructor(next: Dispatch, env: PolicyEnv, timeoutMs: number, attempt: Attempt, handler: AttemptHandler) {
    super(env.clock, handler);
    const startMs = env.clock.now();
    const deadlineMs = attempt.origin.deadlineMs;
    this.byDeadline = deadlineMs < startMs + timeoutMs;
    this.start(next, attempt, Math.min(startMs + timeoutMs, deadlineMs));
  }

  protected cutShort(r: AttemptResult, firedAtMs: number): AttemptResult {
    if (r.kind === 'ok') return r;
    const kind = this.byDeadline ? 'deadline-exceeded' : 'timeout';
    // The transport, aborted by the timer, has mostly said so already: then that result is
    // this one (the same fields in the same order), and no copy is made.
    if (r.kind === kind && r.status === 0 && r.endMs === firedAtMs) return r;
    return { ...r, kind, status: 0, endMs: firedAtMs };
  }
}
