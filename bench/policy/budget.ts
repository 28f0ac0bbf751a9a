import type { OutcomeKind } from '../outcome.js';

/**
 * A retry budget: state shared by every origin of one client (one object per client
 * instance). The retry policy asks it before each retry; hedges ask too.
 */
export interface RetryBudget {
  /** An origin's first attempt is about to go (a request, in SRE terms). */
  onRequest(): void;
  /**
   * May a retry (or hedge) go after a failure of `after`? Yes: its cost is withdrawn
   * and returned (> 0). No: 0, nothing changes.
   */
  acquire(after: OutcomeKind | 'hedge'): number;
  /** The origin succeeded; `costPaid` is what its successful retry cost (0: no retry was needed). */
  onSuccess(costPaid: number): void;
  /** Tokens left now (for tests and reports). */
  readonly tokens: number;
}

export interface TokenBucketOptions {
  /** Most tokens the bucket holds; it starts full. */
  readonly capacity: number;
  /** Tokens each origin deposits when it starts (SRE: the retry ratio, e.g. 0.1). */
  readonly perRequest: number;
  /** Tokens an origin that succeeded without a retry deposits (AWS SDK: 1). */
  readonly perSuccess: number;
  /** A successful retry gives its cost back (AWS SDK: yes). */
  readonly refundOnSuccess: boolean;
  /** Tokens a retry costs (SRE: 1; AWS SDK: 5). */
  readonly retryCost: number;
  /** Tokens a retry after a timeout costs (AWS SDK: 10; otherwise as retryCost). */
  readonly timeoutCost: number;
}

/**
 * The token bucket behind both published budget styles:
 *
 * - SRE (Google SRE book ch. 22, Finagle): each request deposits `ratio` tokens, each
 *   retry costs 1, the bucket holds `burst`: retries stay below `ratio` of requests
 *   over time (10% → the load grows at most about 1.1x), with a burst allowance.
 * - AWS SDK "standard" retry mode: a 500-token quota, a retry costs 5 (10 after a
 *   timeout), a success without retry deposits 1 and a successful retry refunds its cost.
 */
export class TokenBucket implements RetryBudget {
  private level: number;

  constructor(private readonly o: TokenBucketOptions) {
    for (const [k, v] of Object.entries(o))
      if (typeof v === 'number' && !(v >= 0 && Number.isFinite(v)))
        throw new RangeError(`${k} must be a finite number >= 0 (got ${v})`);
    if (!(o.retryCost > 0) || !(o.timeoutCost > 0))
      throw new RangeError('a retry must cost more than 0 tokens');
    this.level = o.capacity;
  }

  get tokens(): number {
    return this.level;
  }

  onRequest(): void {
    this.deposit(this.o.perRequest);
  }

  acquire(after: OutcomeKind | 'hedge'): number {
    const cost = after === 'timeout' ? this.o.timeoutCost : this.o.retryCost;
    // A small epsilon: ten deposits of 0.1 make one token despite binary fractions.
    if (this.level + 1e-9 < cost) return 0;
    this.level = Math.max(0, this.level - cost);
    return cost;
  }

  onSuccess(costPaid: number): void {
    this.deposit(costPaid > 0 ? (this.o.refundOnSuccess ? costPaid : 0) : this.o.perSuccess);
  }

  private deposit(t: number): void {
    this.level = Math.min(this.o.capacity, this.level + t);
  }
}

/** SRE style: retries at most `ratio` of requests, with `burst` tokens in hand. */
export function ratioBudget(ratio: number, burst: number): TokenBucket {
  return new TokenBucket({
    capacity: burst,
    perRequest: ratio,
    perSuccess: 0,
    refundOnSuccess: false,
    retryCost: 1,
    timeoutCost: 1,
  });
}

/** AWS SDK standard mode (defaults: 500 tokens, cost 5, timeout cost 10, +1 per success). */
export function awsBudget(
  o: Partial<Pick<TokenBucketOptions, 'capacity' | 'retryCost' | 'timeoutCost' | 'perSuccess'>> = {},
): TokenBucket {
  return new TokenBucket({
    capacity: o.capacity ?? 500,
    perRequest: 0,
    perSuccess: o.perSuccess ?? 1,
    refundOnSuccess: true,
    retryCost: o.retryCost ?? 5,
    timeoutCost: o.timeoutCost ?? 10,
  });
}
