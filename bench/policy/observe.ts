import type { Clock } from '../../foundation/clock.js';
import type { Recorder } from '../record/Recorder.js';
import type { ClientPolicy } from './ClientPolicy.js';

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
  return (next) => async (attempt, signal) => {
    const started = clock ? recorder.attemptStarted(clock.now()) : undefined;
    let r = await next(attempt, signal);
    if (signal.aborted && r.kind !== 'ok') r = { ...r, kind: 'cancelled', status: 0 };
    recorder.attempt(attempt, r, started);
    return r;
  };
}
