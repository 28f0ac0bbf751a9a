import { clearAlarm, setAlarm, type Alarm } from '../../foundation/clock.js';
import { lastNumberOf, type Attempt, type AttemptResult, type Origin } from '../outcome.js';
import { immediate, type Backoff } from './backoff.js';
import type { RetryBudget } from './budget.js';
import type { ClientPolicy, PolicyEnv } from './ClientPolicy.js';
import { SETTLED, type AttemptHandler, type Dispatch, type InFlight } from './dispatch.js';

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
  const rules: RetryRules = {
    max: opts.maxAttempts,
    on: opts.retryOn ?? RETRY_ON,
    budget: opts.budget,
    start: opts.backoff ?? immediate(),
    otherReplica: opts.otherReplica === true,
  };
  return (next, env) => (first, handler) => new RetryingOrigin(next, env, rules, first, handler);
}

/** A retry layer's options, resolved once. */
interface RetryRules {
  readonly max: number;
  readonly on: readonly RetryOn[];
  readonly budget: RetryBudget | undefined;
  readonly start: Backoff;
  readonly otherReplica: boolean;
}

/**
 * One origin's tries, one after another. The layer below may answer inside `next` (a
 * retry then goes out from inside the previous try's answer) or inside `abort`.
 */
class RetryingOrigin implements AttemptHandler, InFlight, Alarm {
  private below: InFlight = SETTLED;
  private backoff: Backoff;
  private paid = 0;
  private tries = 0;
  /** Bumped per try sent: a try that answered (and retried) inside `next` is not kept as `below`. */
  private sent = 0;
  private aborted = false;
  private done = false;
  /** The failed try a backoff wait follows (undefined when not waiting), and the wait's alarm (-1: none). */
  private last: AttemptResult | undefined;
  private waitAlarm = -1;
  private readonly origin: Origin;

  constructor(
    private readonly next: Dispatch,
    private readonly env: PolicyEnv,
    private readonly rules: RetryRules,
    first: Attempt,
    private readonly handler: AttemptHandler,
  ) {
    this.origin = first.origin;
    this.backoff = rules.start;
    rules.budget?.onRequest();
    this.send(first);
  }

  onResponse(r: AttemptResult): void {
    if (this.done) return;
    const tries = ++this.tries;
    const { rules, env, origin } = this;
    if (r.kind === 'ok') {
      rules.budget?.onSuccess(this.paid);
      return this.finish(r);
    }
    if (this.aborted || !isRetryable(r, rules.on)) return this.finish(r);
    const now = env.clock.now();
    if (tries >= rules.max) return rules.max > 1 ? this.deny(r, 'max-attempts', now) : this.finish(r);
    this.backoff = this.backoff.next(env.rng);
    const delayMs = Math.max(this.backoff.delayMs, r.retryAfterMs ?? 0);
    if (now + delayMs >= origin.deadlineMs) return this.deny(r, 'deadline', now);
    if (rules.budget) {
      this.paid = rules.budget.acquire(r.kind);
      if (this.paid === 0) return this.deny(r, 'budget', now);
    }
    env.emit({
      type: 'retry',
      client: env.client,
      origin: origin.id,
      number: lastNumberOf(r) + 1,
      after: r.kind,
      delayMs,
      atMs: now,
    });
    this.below = SETTLED;
    this.last = r;
    // A plain clock timer, not sleepUntil: a retry's wait needs no sub-millisecond
    // precision, and thousands of waits spinning out their last millisecond would cost
    // the load generator CPU during a storm.
    if (delayMs > 0) this.waitAlarm = setAlarm(env.clock, now + delayMs, this);
    else this.sendRetry();
  }

  abort(): void {
    if (this.done || this.aborted) return;
    this.aborted = true;
    const wait = this.waitAlarm;
    if (wait >= 0) {
      // Cut the wait short: the origin ends with the try the wait followed.
      this.waitAlarm = -1;
      clearAlarm(this.env.clock, wait, this);
      this.finish(this.last!);
    } else this.below.abort();
  }

  /** The backoff wait is over. */
  onAlarm(): void {
    this.waitAlarm = -1;
    this.sendRetry();
  }

  /** The next try, after `last` failed. */
  private sendRetry(): void {
    const r = this.last!;
    this.last = undefined;
    const number = lastNumberOf(r) + 1;
    // r.replica is set only when a balancer picked it: there is another replica to go to.
    this.send(
      this.rules.otherReplica && r.replica !== undefined
        ? { origin: this.origin, number, avoidReplica: r.replica }
        : { origin: this.origin, number },
    );
  }

  private send(a: Attempt): void {
    const n = ++this.sent;
    const below = this.next(a, this);
    if (n === this.sent && !this.done && this.last === undefined) this.below = below;
  }

  private deny(r: AttemptResult, reason: 'budget' | 'deadline' | 'max-attempts', atMs: number): void {
    const env = this.env;
    env.emit({ type: 'retry-denied', client: env.client, origin: this.origin.id, reason, atMs });
    this.finish(r);
  }

  private finish(r: AttemptResult): void {
    this.done = true;
    this.below = SETTLED;
    this.handler.onResponse(r);
  }
}
