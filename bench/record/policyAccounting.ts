import type { BreakerState, PolicyEvent } from '../policy/events.js';
import { bucketOf, bump, type BucketSeries } from './buckets.js';

/** Which client policies the run used (their counters are null when absent). */
export interface PolicyPresence {
  readonly clients: number;
  readonly budget: boolean;
  readonly breaker: boolean;
  readonly throttle: boolean;
  readonly hedge: boolean;
  readonly abandon: boolean;
}

export const NO_POLICIES: PolicyPresence = {
  clients: 1,
  budget: false,
  breaker: false,
  throttle: false,
  hedge: false,
  abandon: false,
};

/** Per-policy counters over the whole run. */
export interface PolicyCounters {
  /** Retries scheduled (each then sent, unless the breaker or throttle refused it). */
  retries: number;
  retriesDeniedBudget: number;
  retriesCutByDeadline: number;
  retriesExhausted: number;
  breakerOpens: number;
  breakerRejected: number;
  throttled: number;
  hedgesSent: number;
  hedgesWon: number;
  hedgesDenied: number;
  cancelledAttempts: number;
}

/**
 * What the client policies decided, counted: the run's per-policy counters, their
 * per-bucket series, and the time each client's breaker spent open or half-open.
 */
export class PolicyAccount {
  readonly counters: PolicyCounters = {
    retries: 0,
    retriesDeniedBudget: 0,
    retriesCutByDeadline: 0,
    retriesExhausted: 0,
    breakerOpens: 0,
    breakerRejected: 0,
    throttled: 0,
    hedgesSent: 0,
    hedgesWon: 0,
    hedgesDenied: 0,
    cancelledAttempts: 0,
  };
  // Breaker state per client and since when, to integrate time spent open per bucket.
  private readonly breakerState: { state: BreakerState; sinceMs: number }[] = [];

  constructor(
    private readonly presence: PolicyPresence,
    private readonly s: BucketSeries,
    private readonly bucketMs: number,
  ) {
    for (let i = 0; i < presence.clients; i++) this.breakerState.push({ state: 'closed', sinceMs: 0 });
  }

  count(e: PolicyEvent): void {
    const c = this.counters;
    switch (e.type) {
      case 'retry':
        c.retries++;
        return;
      case 'retry-denied':
        if (e.reason === 'budget') {
          c.retriesDeniedBudget++;
          bump(this.s.retriesDeniedBudget, bucketOf(e.atMs, this.bucketMs));
        } else if (e.reason === 'deadline') c.retriesCutByDeadline++;
        else c.retriesExhausted++;
        return;
      case 'rejected':
        // A first attempt the breaker or the throttle refused was still offered on
        // schedule: the generator did its part (validity check 4 reads firstSends).
        if (e.number === 1) bump(this.s.firstSends, bucketOf(e.atMs, this.bucketMs));
        if (e.by === 'breaker') {
          c.breakerRejected++;
          bump(this.s.rejectedBreaker, bucketOf(e.atMs, this.bucketMs));
        } else {
          c.throttled++;
          bump(this.s.rejectedThrottle, bucketOf(e.atMs, this.bucketMs));
        }
        return;
      case 'breaker': {
        if (e.to === 'open') {
          c.breakerOpens++;
          bump(this.s.breakerOpens, bucketOf(e.atMs, this.bucketMs));
        }
        const st = this.breakerState[e.client];
        if (st) {
          this.accrueBreaker(st, e.atMs);
          st.state = e.to;
        }
        return;
      }
      case 'hedge-won':
        c.hedgesWon++;
        return;
      case 'hedge-denied':
        c.hedgesDenied++;
        return;
    }
  }

  /** At the run's end: every breaker's time in its last state, up to `untilMs`. */
  close(untilMs: number): void {
    for (const st of this.breakerState) this.accrueBreaker(st, untilMs);
  }

  /** Adds the time a client's breaker spent in its current state, up to `untilMs`, to the buckets. */
  private accrueBreaker(st: { state: BreakerState; sinceMs: number }, untilMs: number): void {
    const series =
      st.state === 'open'
        ? this.s.breakerOpen
        : st.state === 'half-open'
          ? this.s.breakerHalfOpen
          : undefined;
    let t = st.sinceMs;
    st.sinceMs = Math.max(st.sinceMs, untilMs);
    if (!series) return;
    const share = 1 / (this.presence.clients * this.bucketMs);
    while (t < untilMs) {
      const b = bucketOf(t, this.bucketMs);
      const end = Math.min(untilMs, (b + 1) * this.bucketMs);
      while (series.length <= b) series.push(0);
      series[b]! += (end - t) * share;
      t = end;
    }
  }
}
