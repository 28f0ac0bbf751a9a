import type { Recorded } from '../../bench/record/Recorder.js';
import { round } from '../../foundation/round.js';

/**
 * Per-policy counters of a run (whole run). A counter is null when the client did not
 * use that policy, so "0 breaker opens" always means a breaker that never opened.
 */
export interface PolicySummary {
  /** Independent client instances the load was split over. */
  readonly clients: number;
  /** Retries scheduled (after a retryable failure, with maxAttempts, deadline and budget allowing). */
  readonly retries: number;
  readonly retriesDeniedByBudget: number | null;
  /** Retryable failures not retried because the next try would start past the origin's deadline. */
  readonly retriesCutByDeadline: number;
  /** Retryable failures not retried because maxAttempts was reached. */
  readonly retriesExhausted: number;
  readonly breakerOpens: number | null;
  /** Attempts the open (or busy half-open) breaker refused; never sent. */
  readonly breakerRejected: number | null;
  /** Client-seconds the breakers spent open (sum over clients). */
  readonly breakerOpenS: number | null;
  /** Attempts refused by client-side adaptive throttling; never sent. */
  readonly throttled: number | null;
  readonly hedgesSent: number | null;
  /** Origins whose success came from a hedge. */
  readonly hedgesWon: number | null;
  /** Hedges not sent for want of a budget token. */
  readonly hedgesDenied: number | null;
  /** Attempts the client cancelled (hedge losers, abandoned origins, the run's end). */
  readonly cancelledAttempts: number;
  /** Origins whose user gave up (outcome `abandoned`). */
  readonly abandoned: number | null;
}

export function policySummary(r: Recorded): PolicySummary {
  const c = r.totals.policies;
  const p = r.policies;
  const when = (on: boolean, v: number): number | null => (on ? v : null);
  const openMs = r.series.breakerOpen.reduce((a, f) => a + f, 0) * r.bucketMs * p.clients;
  return {
    clients: p.clients,
    retries: c.retries,
    retriesDeniedByBudget: when(p.budget, c.retriesDeniedBudget),
    retriesCutByDeadline: c.retriesCutByDeadline,
    retriesExhausted: c.retriesExhausted,
    breakerOpens: when(p.breaker, c.breakerOpens),
    breakerRejected: when(p.breaker, c.breakerRejected),
    breakerOpenS: when(p.breaker, round(openMs / 1000, 3)),
    throttled: when(p.throttle, c.throttled),
    hedgesSent: when(p.hedge, c.hedgesSent),
    hedgesWon: when(p.hedge, c.hedgesWon),
    hedgesDenied: when(p.hedge, c.hedgesDenied),
    cancelledAttempts: c.cancelledAttempts,
    abandoned: when(p.abandon, r.totals.outcomes.abandoned),
  };
}
