import type { ClientPolicy } from './ClientPolicy.js';
import type { Clock } from '../../foundation/clock.js';
import type { AttemptResult } from '../outcome.js';
import { refuse } from './ClientPolicy.js';
import { SETTLED, type AttemptHandler } from './dispatch.js';
import type { BreakerState } from './events.js';
import { SlidingCounts } from './window.js';

/**
 * When a closed breaker opens: a strategy (cockatiel's pluggable breaker). It sees
 * every attempt that completes while the breaker is closed.
 */
export interface BreakerStrategy {
  success(nowMs: number): void;
  /** Records a failure; true when the breaker should open now. */
  failure(nowMs: number): boolean;
  /** Forgets everything (the breaker closed again). */
  reset(): void;
}

export interface SamplingOptions {
  /** Opens when failures / attempts in the window reach this (0..1]. */
  readonly failureRatio: number;
  /** The sliding window, ms. */
  readonly windowMs: number;
  /** ...and only once the window holds at least this many attempts. */
  readonly minVolume: number;
}

/** Opens on a failure ratio over a sliding time window, once a minimum volume is seen. */
export class SamplingBreaker implements BreakerStrategy {
  private readonly w: SlidingCounts;

  constructor(private readonly o: SamplingOptions) {
    if (!(o.failureRatio > 0 && o.failureRatio <= 1))
      throw new RangeError(`failureRatio must be in (0, 1] (got ${o.failureRatio})`);
    if (!(o.minVolume >= 1)) throw new RangeError(`minVolume must be >= 1 (got ${o.minVolume})`);
    this.w = new SlidingCounts(o.windowMs, 10);
  }

  success(nowMs: number): void {
    this.w.add(nowMs, 1, 0);
  }

  failure(nowMs: number): boolean {
    this.w.add(nowMs, 1, 1);
    const { a: total, b: failed } = this.w.totals(nowMs);
    return total >= this.o.minVolume && failed >= this.o.failureRatio * total - 1e-9;
  }

  reset(): void {
    this.w.reset();
  }
}

/** What the breaker counts as a failure: the server or the path to it is in trouble. */
export function isBreakerFailure(r: Pick<AttemptResult, 'kind' | 'status'>): boolean {
  switch (r.kind) {
    case 'timeout':
    case 'deadline-exceeded':
    case 'conn-refused':
    case 'conn-reset':
    case 'conn-error':
    case 'http-5xx':
    case 'shed':
      return true;
    case 'http-4xx':
      return r.status === 429;
    default:
      return false;
  }
}

export interface CircuitBreakerOptions {
  /** How long the breaker stays open before it lets probes through, ms. */
  readonly openMs: number;
  /** Probes let through at once when half-open; this many successes close it. */
  readonly probes: number;
}

/** A pass through the breaker: whether it was a half-open probe, and the breaker generation it belongs to. */
export interface BreakerPass {
  readonly probe: boolean;
  readonly generation: number;
}

/**
 * The circuit breaker's state machine, one per client, shared by all its origins:
 *
 *   closed ──(strategy says open)──► open ──(openMs later)──► half-open
 *     ▲                                ▲                          │
 *     └──────(probes successes)────────┼──────────────────────────┤
 *                                      └───(a probe fails)────────┘
 *
 * Closed lets everything through; open refuses everything; half-open lets `probes`
 * attempts through at a time and refuses the rest. Results of attempts admitted in an
 * earlier state (an older generation) are ignored: they describe the past. A probe that
 * was cancelled (kind `cancelled`) frees its slot without a verdict.
 */
export class CircuitBreaker {
  private s: BreakerState = 'closed';
  private generation = 0;
  private probesOut = 0;
  private probeOk = 0;
  private cancelTimer: (() => void) | undefined;
  /** Times the breaker opened (from closed or half-open). */
  opens = 0;

  constructor(
    private readonly strategy: BreakerStrategy,
    private readonly o: CircuitBreakerOptions,
    private readonly clock: Clock,
    private readonly onChange: (from: BreakerState, to: BreakerState, atMs: number) => void = () => {},
  ) {
    if (!(o.openMs > 0)) throw new RangeError(`openMs must be > 0 (got ${o.openMs})`);
    if (!(o.probes >= 1)) throw new RangeError(`probes must be >= 1 (got ${o.probes})`);
  }

  get state(): BreakerState {
    return this.s;
  }

  /** Admits an attempt (a pass), or refuses it (undefined). */
  tryPass(): BreakerPass | undefined {
    switch (this.s) {
      case 'closed':
        return { probe: false, generation: this.generation };
      case 'open':
        return undefined;
      case 'half-open':
        if (this.probesOut >= this.o.probes) return undefined;
        this.probesOut++;
        return { probe: true, generation: this.generation };
    }
  }

  /** The admitted attempt completed with `r`. */
  onResult(pass: BreakerPass, r: Pick<AttemptResult, 'kind' | 'status'>): void {
    if (pass.generation !== this.generation) return;
    const now = this.clock.now();
    if (pass.probe) {
      this.probesOut--;
      if (r.kind === 'cancelled') return;
      if (isBreakerFailure(r)) this.open(now);
      else if (++this.probeOk >= this.o.probes) this.to('closed', now);
      return;
    }
    if (r.kind === 'cancelled') return;
    if (isBreakerFailure(r)) {
      if (this.strategy.failure(now)) this.open(now);
    } else this.strategy.success(now);
  }

  private open(now: number): void {
    this.opens++;
    this.to('open', now);
    const at = now + this.o.openMs;
    this.cancelTimer = this.clock.timer(at, () => {
      this.cancelTimer = undefined;
      if (this.s === 'open') this.to('half-open', this.clock.now());
    });
  }

  private to(next: BreakerState, atMs: number): void {
    const from = this.s;
    this.s = next;
    this.generation++;
    this.probesOut = 0;
    this.probeOk = 0;
    if (next === 'closed') this.strategy.reset();
    this.onChange(from, next, atMs);
  }

  /** Stops its timer (end of run). */
  dispose(): void {
    this.cancelTimer?.();
  }
}

/**
 * The breaker as a policy on each attempt: a refused attempt is never sent and comes
 * back at once (inside dispatch) as `breaker-open` (not retried: failing fast is the
 * point). An admitted attempt's InFlight is the layer below's: the breaker only listens.
 */
export function breaker(b: CircuitBreaker): ClientPolicy {
  return (next, env) => (attempt, handler) => {
    const pass = b.tryPass();
    if (!pass) {
      handler.onResponse(refuse(env, attempt, 'breaker'));
      return SETTLED;
    }
    return next(attempt, new BreakerVerdict(b, pass, handler));
  };
}

/** Gives the breaker its verdict on an admitted attempt, then passes the result up. */
class BreakerVerdict implements AttemptHandler {
  constructor(
    private readonly b: CircuitBreaker,
    private readonly pass: BreakerPass,
    private readonly handler: AttemptHandler,
  ) {}

  onResponse(r: AttemptResult): void {
    this.b.onResult(this.pass, r);
    this.handler.onResponse(r);
  }
}
