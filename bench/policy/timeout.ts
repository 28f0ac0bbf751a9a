import type { Attempt, AttemptResult } from '../outcome.js';
import type { ClientPolicy, PolicyEnv } from './ClientPolicy.js';
import { SETTLED, type AttemptHandler, type Dispatch, type InFlight } from './dispatch.js';

/**
 * Gives each attempt `timeoutMs`, cut short by the origin's deadline. When its timer
 * fires it aborts the attempt below and reports `timeout` (or `deadline-exceeded` when
 * the deadline, not the attempt timeout, was the limit). The endMs of a timed-out
 * attempt is the moment the timer fired, not when the transport noticed.
 */
export function attemptTimeout(timeoutMs: number): ClientPolicy {
  return (next, env) => (attempt, handler) => new TimedAttempt(next, env, timeoutMs, attempt, handler);
}

/** One attempt under its timer. The layer below may answer inside `next` or inside `abort`. */
class TimedAttempt implements AttemptHandler, InFlight {
  private below: InFlight = SETTLED;
  private firedAtMs = -1;
  private done = false;
  private readonly byDeadline: boolean;
  private readonly cancel: () => void;

  constructor(
    next: Dispatch,
    private readonly env: PolicyEnv,
    timeoutMs: number,
    attempt: Attempt,
    private readonly handler: AttemptHandler,
  ) {
    const startMs = env.clock.now();
    const deadlineMs = attempt.origin.deadlineMs;
    this.byDeadline = deadlineMs < startMs + timeoutMs;
    // The timer before the attempt: a synchronous answer cancels it.
    this.cancel = env.clock.timer(Math.min(startMs + timeoutMs, deadlineMs), () => this.fire());
    const below = next(attempt, this);
    if (!this.done) this.below = below;
  }

  onResponse(r: AttemptResult): void {
    if (this.done) return;
    this.done = true;
    this.cancel();
    this.below = SETTLED;
    const at = this.firedAtMs;
    this.handler.onResponse(
      at >= 0 && r.kind !== 'ok'
        ? { ...r, kind: this.byDeadline ? 'deadline-exceeded' : 'timeout', status: 0, endMs: at }
        : r,
    );
  }

  abort(): void {
    this.below.abort();
  }

  private fire(): void {
    if (this.done) return;
    this.firedAtMs = this.env.clock.now();
    this.below.abort();
  }
}
