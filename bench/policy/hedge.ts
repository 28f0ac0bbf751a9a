import type { Attempt, AttemptResult } from '../outcome.js';
import type { BenchController } from '../abort.js';
import type { RetryBudget } from './budget.js';
import type { LegacyPolicy as ClientPolicy } from './legacyPromise.js'; // TEMPORARY (legacyPromise.ts)

export interface HedgeOptions {
  /** Send a hedge when the attempt has had no answer for this long, ms. */
  readonly delayMs: number;
  /** Hedges per try at most (one more every delayMs). Default 1. */
  readonly maxHedges?: number;
  /** When given, each hedge needs a token, like a retry (gRPC's rule): no token, no hedge. */
  readonly budget?: RetryBudget;
}

/**
 * Hedged requests (Dean and Barroso, "The Tail at Scale"): when an attempt has not
 * answered after `delayMs`, send another attempt of the same origin (numbered after
 * it, marked `hedge`) without cancelling the first. The first success wins and every
 * other attempt still in flight is cancelled (it is recorded as `cancelled`). When all
 * fail, the result is the last failure that reached the service (a local refusal of a
 * hedge by the breaker or the throttle never hides the first attempt's own failure).
 * A failure before `delayMs` ends the try at once: it goes up to the retry policy.
 *
 * Every hedge is an attempt: it passes the breaker and the throttle, is counted in
 * the amplification, and carries the propagated deadline.
 */
export function hedge(o: HedgeOptions): ClientPolicy {
  if (!(o.delayMs >= 0)) throw new RangeError(`delayMs must be >= 0 (got ${o.delayMs})`);
  const maxHedges = o.maxHedges ?? 1;
  if (!(maxHedges >= 1)) throw new RangeError(`maxHedges must be >= 1 (got ${maxHedges})`);
  return (next, env) => (first, signal) =>
    new Promise<AttemptResult>((resolve) => {
      const origin = first.origin;
      const inFlight = new Set<BenchController>();
      let number = first.number;
      let hedges = 0;
      let done = false;
      let failure: AttemptResult | undefined;
      let cancelTimer: (() => void) | undefined;

      const onOuterAbort = (): void => {
        for (const c of inFlight) c.abort();
      };
      signal.addEventListener('abort', onOuterAbort, { once: true });

      const finish = (r: AttemptResult): void => {
        done = true;
        cancelTimer?.();
        signal.removeEventListener('abort', onOuterAbort);
        for (const c of inFlight) c.abort(); // the losers
        resolve(number > r.attempt ? { ...r, lastNumber: number } : r);
      };

      const launch = (a: Attempt): void => {
        const ctl = env.newController?.() ?? new AbortController();
        inFlight.add(ctl);
        void next(a, ctl.signal).then((r) => {
          inFlight.delete(ctl);
          if (done) return;
          if (r.kind === 'ok') {
            if (a.hedge)
              env.emit({
                type: 'hedge-won',
                client: env.client,
                origin: origin.id,
                number: a.number,
                atMs: env.clock.now(),
              });
            finish(r);
            return;
          }
          const local = r.kind === 'breaker-open' || r.kind === 'throttled';
          if (!failure || !local) failure = r;
          if (inFlight.size === 0) finish(failure);
        });
      };

      const schedule = (atMs: number): void => {
        cancelTimer = env.clock.timer(atMs, () => {
          cancelTimer = undefined;
          if (done || signal.aborted || inFlight.size === 0) return;
          if (o.budget && o.budget.acquire('hedge') === 0) {
            env.emit({ type: 'hedge-denied', client: env.client, origin: origin.id, atMs: env.clock.now() });
            return;
          }
          hedges++;
          launch({ origin, number: ++number, hedge: true });
          if (hedges < maxHedges && !done) schedule(atMs + o.delayMs);
        });
      };

      launch(first);
      if (!done) schedule(env.clock.now() + o.delayMs);
    });
}
