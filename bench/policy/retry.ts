import type { AbortSignalLike } from '../../foundation/abortSignal.js';
import { lastNumberOf, type AttemptResult } from '../outcome.js';
import { immediate, type Backoff } from './backoff.js';
import type { RetryBudget } from './budget.js';
import type { ClientPolicy } from './ClientPolicy.js';
import type { Clock } from '../../foundation/clock.js';

/**
 * What a retry may follow. Never a 4xx other than 429: the request itself was wrong.
 *   timeout     the attempt's own timeout fired
 *   connection  refused, reset or any other transport error
 *   5xx         a 5xx answer, including a 503 marked as shed
 *   429         Too Many Requests; its Retry-After is honoured
 */
export const RETRY_ON = ['timeout', 'connection', '5xx', '429'] as const;
export type RetryOn = (typeof RETRY_ON)[number];

/** Whether `r` is a failure worth another try under `on`. */
export function isRetryable(
  r: Pick<AttemptResult, 'kind' | 'status'>,
  on: readonly RetryOn[] = RETRY_ON,
): boolean {
  switch (r.kind) {
    case 'timeout':
      return on.includes('timeout');
    case 'conn-refused':
    case 'conn-reset':
    case 'conn-error':
      return on.includes('connection');
    case 'http-5xx':
    case 'shed':
      return on.includes('5xx');
    case 'http-4xx':
      return r.status === 429 && on.includes('429');
    default:
      // ok, deadline-exceeded, and the client's own refusals (breaker, throttle,
      // cancelled, abandoned): another try now would only repeat the refusal.
      return false;
  }
}

export interface RetryOptions {
  /** Tries in all, the first included (hedges are counted by the hedge policy). MUST BE >= 1. */
  readonly maxAttempts: number;
  /** The wait before each retry. Default: immediate. */
  readonly backoff?: Backoff;
  /** What to retry on. Default: all of RETRY_ON. */
  readonly retryOn?: readonly RetryOn[];
  /** The client's retry budget, asked before each retry (shared by the client's origins). */
  readonly budget?: RetryBudget;
  /**
   * Send a retry to another replica than the one its previous try failed on (the balancer
   * below picks among the others; bench/policy/balance.ts). Nothing to do with one replica.
   */
  readonly otherReplica?: boolean;
}

/**
 * Sends the origin again after a retryable failure. A retry is not sent when
 * maxAttempts is reached, when it would start at or after the origin's deadline, or
 * when the budget has no token for it (checked in that order, so tokens are spent only
 * on retries that go). The wait is the backoff's, or the server's Retry-After when
 * longer. The result is the last attempt's. With `otherReplica`, a retry avoids the
 * replica the failed try was served by.
 */
export function retry(opts: RetryOptions): ClientPolicy {
  if (!(opts.maxAttempts >= 1)) throw new RangeError(`maxAttempts must be >= 1 (got ${opts.maxAttempts})`);
  const max = opts.maxAttempts;
  const on = opts.retryOn ?? RETRY_ON;
  const budget = opts.budget;
  const start = opts.backoff ?? immediate();
  const otherReplica = opts.otherReplica === true;
  return (next, env) => async (first, signal) => {
    const origin = first.origin;
    budget?.onRequest();
    let backoff = start;
    let paid = 0;
    let r = await next(first, signal);
    for (let tries = 1; ; tries++) {
      if (r.kind === 'ok') {
        budget?.onSuccess(paid);
        return r;
      }
      if (signal.aborted || !isRetryable(r, on)) return r;
      const now = env.clock.now();
      const deny = (reason: 'budget' | 'deadline' | 'max-attempts'): AttemptResult => {
        env.emit({ type: 'retry-denied', client: env.client, origin: origin.id, reason, atMs: now });
        return r;
      };
      if (tries >= max) return max > 1 ? deny('max-attempts') : r;
      backoff = backoff.next(env.rng);
      const delayMs = Math.max(backoff.delayMs, r.retryAfterMs ?? 0);
      if (now + delayMs >= origin.deadlineMs) return deny('deadline');
      if (budget) {
        paid = budget.acquire(r.kind);
        if (paid === 0) return deny('budget');
      }
      const number = lastNumberOf(r) + 1;
      env.emit({
        type: 'retry',
        client: env.client,
        origin: origin.id,
        number,
        after: r.kind,
        delayMs,
        atMs: now,
      });
      if (delayMs > 0) {
        await wait(env.clock, now + delayMs, signal);
        if (signal.aborted) return r;
      }
      // r.replica is set only when a balancer picked it: there is another replica to go to.
      r = await next(
        otherReplica && r.replica !== undefined
          ? { origin, number, avoidReplica: r.replica }
          : { origin, number },
        signal,
      );
    }
  };
}

/**
 * Resolves at `atMs` or when `signal` aborts. A plain clock timer, not sleepUntil: a
 * retry's wait needs no sub-millisecond precision, and thousands of waits spinning
 * out their last millisecond would cost the load generator CPU during a storm.
 */
function wait(clock: Clock, atMs: number, signal: AbortSignalLike): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      cancel();
      signal.removeEventListener('abort', done);
      resolve();
    };
    const cancel = clock.timer(atMs, done);
    signal.addEventListener('abort', done, { once: true });
  });
}
