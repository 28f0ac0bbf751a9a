import type { ClientPolicy } from './ClientPolicy.js';
import type { Clock } from '../../foundation/clock.js';
import type { Rng } from '../../foundation/rng.js';
import type { AttemptResult } from '../outcome.js';
import { isBreakerFailure } from './breaker.js';
import { refuse } from './ClientPolicy.js';
import { SETTLED, type AttemptHandler } from './dispatch.js';
import { SlidingCounts } from './window.js';

export interface ThrottleOptions {
  /**
   * The SRE book's multiplier K: the client lets through about K requests per request
   * the backend accepts. 2 is what the book prefers; lower is more aggressive.
   */
  readonly k: number;
  /** The history the counts cover, ms (the book: 2 minutes). */
  readonly windowMs: number;
}

/**
 * Client-side adaptive throttling (Google SRE book, ch. 21): over the window, with
 * `requests` the attempts the application asked for (including those refused here)
 * and `accepts` those the backend accepted, each new attempt is refused locally with
 * probability
 *
 *   p = max(0, (requests − K · accepts) / (requests + 1))
 *
 * Accepted means answered without a sign of overload: ok, or a 4xx other than 429.
 * Timeouts, connection errors, 5xx, shed and 429 are not accepts. A cancelled attempt
 * (hedge loser, abandoned) stays a request and is not an accept. One per client.
 */
export class AdaptiveThrottle {
  private readonly w: SlidingCounts;
  /** Attempts refused so far. */
  rejected = 0;

  constructor(
    private readonly o: ThrottleOptions,
    private readonly clock: Clock,
  ) {
    if (!(o.k > 0)) throw new RangeError(`k must be > 0 (got ${o.k})`);
    this.w = new SlidingCounts(o.windowMs, 20);
  }

  /** The refusal probability for an attempt asked for now. */
  rejectProbability(): number {
    const { a: requests, b: accepts } = this.w.totals(this.clock.now());
    return Math.max(0, (requests - this.o.k * accepts) / (requests + 1));
  }

  /** Counts a request and decides on it: true lets it through. Draws from `rng` only when p > 0. */
  tryPass(rng: Rng): boolean {
    const p = this.rejectProbability();
    this.w.add(this.clock.now(), 1, 0);
    if (p > 0 && rng.next() < p) {
      this.rejected++;
      return false;
    }
    return true;
  }

  /** The attempt let through completed with `r`. */
  onResult(r: Pick<AttemptResult, 'kind' | 'status'>): void {
    if (r.kind !== 'cancelled' && !isBreakerFailure(r)) this.w.add(this.clock.now(), 0, 1);
  }
}

/**
 * Throttling as a policy on each attempt: a refused attempt comes back at once (inside
 * dispatch) as `throttled`. An admitted attempt's InFlight is the layer below's.
 */
export function throttle(t: AdaptiveThrottle): ClientPolicy {
  return (next, env) => (attempt, handler) => {
    if (!t.tryPass(env.rng)) {
      handler.onResponse(refuse(env, attempt, 'throttle'));
      return SETTLED;
    }
    return next(attempt, new ThrottleCount(t, handler));
  };
}

/** Counts an admitted attempt's result in the throttle's history, then passes it up. */
class ThrottleCount implements AttemptHandler {
  constructor(
    private readonly t: AdaptiveThrottle,
    private readonly handler: AttemptHandler,
  ) {}

  onResponse(r: AttemptResult): void {
    this.t.onResult(r);
    this.handler.onResponse(r);
  }
}
