import type { OutcomeKind } from '../outcome.js';

export type BreakerState = 'closed' | 'open' | 'half-open';

/**
 * What the client policies decided, as plain data. Policies emit these through
 * `PolicyEnv.emit`; the Recorder subscribes (counters, the breaker-state series and
 * events.ndjson lines). Attempts themselves are recorded by `observe`, not here.
 * Times are ms since run start; `client` is the client instance, `origin` the origin id.
 */
export type PolicyEvent =
  /** A retry was scheduled: attempt `number` goes at `atMs + delayMs` after a failure of `after`. */
  | {
      readonly type: 'retry';
      readonly client: number;
      readonly origin: number;
      readonly number: number;
      readonly after: OutcomeKind;
      readonly delayMs: number;
      readonly atMs: number;
    }
  /**
   * A retryable failure was not retried: the budget had no token, the next try would
   * start past the origin's deadline, or maxAttempts was reached.
   */
  | {
      readonly type: 'retry-denied';
      readonly client: number;
      readonly origin: number;
      readonly reason: 'budget' | 'deadline' | 'max-attempts';
      readonly atMs: number;
    }
  /** Attempt `number` was refused locally, never sent (breaker open, or throttled). */
  | {
      readonly type: 'rejected';
      readonly client: number;
      readonly origin: number;
      readonly number: number;
      readonly by: 'breaker' | 'throttle';
      readonly atMs: number;
    }
  /** The client's circuit breaker changed state. */
  | {
      readonly type: 'breaker';
      readonly client: number;
      readonly from: BreakerState;
      readonly to: BreakerState;
      readonly atMs: number;
    }
  /** A hedge was not sent: the budget had no token for it. */
  | { readonly type: 'hedge-denied'; readonly client: number; readonly origin: number; readonly atMs: number }
  /** The origin's success came from a hedge (attempt `number`), not from the attempt it hedged. */
  | {
      readonly type: 'hedge-won';
      readonly client: number;
      readonly origin: number;
      readonly number: number;
      readonly atMs: number;
    };
