import type { Clock } from '../../foundation/clock.js';
import type { Recorder } from '../record/Recorder.js';
import type { Attempt, AttemptResult } from '../outcome.js';
import type { ClientPolicy } from './ClientPolicy.js';
import { SETTLED, type AttemptHandler, type Dispatch, type InFlight } from './dispatch.js';

/**
 * Records every attempt that reaches the transport. Sits below retry, hedge, breaker
 * and throttle, so each try is counted and locally refused ones are not. An attempt
 * that failed because the caller cancelled it (a hedge's loser, an abandoned origin,
 * the run ending) is recorded as `cancelled`, not as whatever the transport saw.
 *
 * With the clock, it also tells the Recorder when each attempt starts, so the Recorder
 * knows which seconds may still gain an attempt (the status line shows only seconds that
 * cannot: Recorder.lastCompleteBucket).
 */
export function observe(recorder: Recorder, clock?: Clock): ClientPolicy {
  return (next) => (attempt, handler) => new ObservedAttempt(next, recorder, clock, attempt, handler);
}

/** One attempt on its way to the transport, recorded when it answers. */
class ObservedAttempt implements AttemptHandler, InFlight {
  private below: InFlight = SETTLED;
  private readonly started: number | undefined;
  private aborted = false;
  private done = false;

  constructor(
    next: Dispatch,
    private readonly recorder: Recorder,
    clock: Clock | undefined,
    private readonly attempt: Attempt,
    private readonly handler: AttemptHandler,
  ) {
    this.started = clock ? recorder.attemptStarted(clock.now()) : undefined;
    const below = next(attempt, this);
    if (!this.done) this.below = below;
  }

  onResponse(result: AttemptResult): void {
    if (this.done) return;
    this.done = true;
    this.below = SETTLED;
    const r =
      this.aborted && result.kind !== 'ok' ? { ...result, kind: 'cancelled' as const, status: 0 } : result;
    this.recorder.attempt(this.attempt, r, this.started);
    this.handler.onResponse(r);
  }

  abort(): void {
    if (this.done) return;
    this.aborted = true;
    this.below.abort();
  }
}
