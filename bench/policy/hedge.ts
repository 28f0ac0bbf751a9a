import type { ClientPolicy } from './ClientPolicy.js';
import type { Attempt, AttemptResult, Origin } from '../outcome.js';
import type { RetryBudget } from './budget.js';
import type { PolicyEnv } from './ClientPolicy.js';
import { SETTLED, type AttemptHandler, type Dispatch, type InFlight } from './dispatch.js';

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
  return (next, env) => (first, handler) => new HedgedTry(next, env, o, maxHedges, first, handler);
}

/**
 * One try: its first attempt and the hedges sent after it, each a `Leg` in flight until
 * it answers. Re-entrant: a leg may answer inside `next` (a local refusal) or inside its
 * own `abort`, so every step re-reads `done` and the legs in flight.
 */
class HedgedTry implements InFlight {
  /** The legs not yet answered, oldest first. */
  private readonly legs: Leg[] = [];
  private number: number;
  private hedges = 0;
  private done = false;
  private aborted = false;
  private failure: AttemptResult | undefined;
  private cancelTimer: (() => void) | undefined;
  private readonly origin: Origin;

  constructor(
    private readonly next: Dispatch,
    private readonly env: PolicyEnv,
    private readonly o: HedgeOptions,
    private readonly maxHedges: number,
    first: Attempt,
    private readonly handler: AttemptHandler,
  ) {
    this.origin = first.origin;
    this.number = first.number;
    this.launch(first);
    if (!this.done) this.schedule(env.clock.now() + o.delayMs);
  }

  /** The caller's cancellation: every leg in flight is aborted; the try ends when the last answers. */
  abort(): void {
    if (this.done || this.aborted) return;
    this.aborted = true;
    this.abortLegs();
  }

  /** A leg answered. */
  settled(leg: Leg, r: AttemptResult): void {
    const i = this.legs.indexOf(leg);
    if (i >= 0) this.legs.splice(i, 1);
    if (this.done) return; // a loser, cancelled by finish
    if (r.kind === 'ok') {
      if (leg.attempt.hedge)
        this.env.emit({
          type: 'hedge-won',
          client: this.env.client,
          origin: this.origin.id,
          number: leg.attempt.number,
          atMs: this.env.clock.now(),
        });
      this.finish(r);
      return;
    }
    const local = r.kind === 'breaker-open' || r.kind === 'throttled';
    if (!this.failure || !local) this.failure = r;
    if (this.legs.length === 0) this.finish(this.failure);
  }

  private launch(a: Attempt): void {
    const leg = new Leg(this, a);
    this.legs.push(leg);
    leg.below = this.next(a, leg);
  }

  private schedule(atMs: number): void {
    this.cancelTimer = this.env.clock.timer(atMs, () => {
      this.cancelTimer = undefined;
      if (this.done || this.aborted || this.legs.length === 0) return;
      if (this.o.budget && this.o.budget.acquire('hedge') === 0) {
        this.env.emit({
          type: 'hedge-denied',
          client: this.env.client,
          origin: this.origin.id,
          atMs: this.env.clock.now(),
        });
        return;
      }
      this.hedges++;
      this.launch({ origin: this.origin, number: ++this.number, hedge: true });
      if (this.hedges < this.maxHedges && !this.done) this.schedule(atMs + this.o.delayMs);
    });
  }

  /**
   * Ends the try: the losers are aborted before the caller hears (as the promise form
   * did); their own answers, inside abort or later, are ignored.
   */
  private finish(r: AttemptResult): void {
    this.done = true;
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    this.abortLegs();
    this.handler.onResponse(this.number > r.attempt ? { ...r, lastNumber: this.number } : r);
  }

  /** Aborts the legs in flight; each leaves `legs` when it answers, possibly at once. */
  private abortLegs(): void {
    if (this.legs.length === 0) return;
    for (const leg of this.legs.slice()) leg.abort();
  }
}

/** One attempt of a hedged try, in flight below. */
class Leg implements AttemptHandler {
  below: InFlight = SETTLED;
  /** Answered or aborted: nothing more to abort. */
  private over = false;

  constructor(
    private readonly of: HedgedTry,
    readonly attempt: Attempt,
  ) {}

  onResponse(r: AttemptResult): void {
    this.over = true;
    this.of.settled(this, r);
  }

  abort(): void {
    if (this.over) return;
    this.over = true;
    this.below.abort();
  }
}
