import type { ClientPolicy } from './ClientPolicy.js';
import type { Clock } from '../../foundation/clock.js';
import type { Rng } from '../../foundation/rng.js';
import type { Attempt, AttemptResult } from '../outcome.js';
import { SETTLED, type AttemptHandler, type Dispatch, type InFlight } from './dispatch.js';

/**
 * How the client picks the api replica of each attempt (DESIGN.md §4): the load balancer
 * is part of the load model, like retries.
 *   round-robin        each replica in turn
 *   random             uniformly at random
 *   least-outstanding  the replica with the fewest of this client's attempts in flight
 *   p2c                power of two choices: two replicas at random, the one with fewer in flight
 *   least-latency      the lowest EWMA of response time (LEAST_LATENCY_ALPHA); a replica
 *                      that fails fast looks fastest, and attracts the traffic (seed 004)
 */
export const BALANCE_POLICIES = [
  'round-robin',
  'random',
  'least-outstanding',
  'p2c',
  'least-latency',
] as const;
export type BalancePolicy = (typeof BALANCE_POLICIES)[number];

/**
 * least-latency's weight of the newest response time: ewma ← α·x + (1−α)·ewma, per
 * completed attempt, so about the last 1/α = 3 samples dominate and the balancer reacts
 * within a handful of attempts (which is also what lets it herd).
 */
export const LEAST_LATENCY_ALPHA = 0.3;

/**
 * What one client's balancer knows of the replicas: its own attempts in flight on each
 * and, for least-latency, the EWMA of each one's response times (NaN: no sample yet).
 * A client-side balancer sees only its own traffic, so each client instance has one.
 */
export class Balancer {
  readonly outstanding: Int32Array;
  readonly ewmaMs: Float64Array;
  /** Where round-robin goes next, and where the scans of the least-* policies start (ties rotate). */
  private cursor = 0;

  constructor(
    readonly policy: BalancePolicy,
    readonly replicas: number,
    private readonly rng: Rng,
  ) {
    if (!(replicas >= 1 && Number.isInteger(replicas)))
      throw new RangeError(`replicas must be a whole number >= 1 (got ${replicas})`);
    this.outstanding = new Int32Array(replicas);
    this.ewmaMs = new Float64Array(replicas).fill(Number.NaN);
  }

  /**
   * The replica for the next attempt, never `avoid` when another exists (-1: none to
   * avoid); with `avoid` the policy chooses among the others.
   */
  pick(avoid = -1): number {
    const n = this.replicas;
    if (n === 1) return 0;
    const skip = avoid >= 0 && avoid < n ? avoid : -1;
    switch (this.policy) {
      case 'round-robin': {
        let i = this.cursor++ % n;
        if (i === skip) i = this.cursor++ % n;
        return i;
      }
      case 'random':
        return this.draw(skip);
      case 'p2c': {
        const m = skip < 0 ? n : n - 1;
        if (m === 1) return this.draw(skip);
        // Two distinct candidates among the m allowed, then back to replica indexes.
        const a = Math.floor(this.rng.next() * m);
        let b = Math.floor(this.rng.next() * (m - 1));
        if (b >= a) b++;
        const ra = skip >= 0 && a >= skip ? a + 1 : a;
        const rb = skip >= 0 && b >= skip ? b + 1 : b;
        return this.outstanding[rb]! < this.outstanding[ra]! ? rb : ra;
      }
      case 'least-outstanding':
        return this.lowest(this.outstanding, skip);
      case 'least-latency':
        return this.lowest(this.ewmaMs, skip);
    }
  }

  /** Uniform among the replicas other than `skip`. */
  private draw(skip: number): number {
    const n = this.replicas;
    if (skip < 0) return Math.floor(this.rng.next() * n);
    const i = Math.floor(this.rng.next() * (n - 1));
    return i >= skip ? i + 1 : i;
  }

  /**
   * The replica with the lowest score other than `skip`; the scan starts one further each
   * time, so ties rotate rather than favour replica 0. A score of NaN (least-latency, no
   * sample yet) counts as 0: a replica is tried before anything is known of it.
   */
  private lowest(score: ArrayLike<number>, skip: number): number {
    const n = this.replicas;
    const start = this.cursor++ % n;
    let best = -1;
    let bestScore = Number.POSITIVE_INFINITY;
    for (let k = 0; k < n; k++) {
      const i = (start + k) % n;
      if (i === skip) continue;
      const s = score[i]!;
      const v = s === s ? s : 0;
      if (v < bestScore) {
        best = i;
        bestScore = v;
      }
    }
    return best;
  }

  /** An attempt was sent to replica `i`. */
  started(i: number): void {
    this.outstanding[i]!++;
  }

  /** The attempt on replica `i` ended after `ms` (NaN: it was cancelled, its time says nothing). */
  ended(i: number, ms: number): void {
    this.outstanding[i]!--;
    if (this.policy !== 'least-latency' || !(ms >= 0)) return;
    const e = this.ewmaMs[i]!;
    // e + α(x − e): equal samples leave it exactly equal, so equal replicas tie (and rotate).
    this.ewmaMs[i] = e === e ? e + LEAST_LATENCY_ALPHA * (ms - e) : ms;
  }
}

export interface BalanceOptions {
  readonly policy: BalancePolicy;
  /** The api replicas the transport reaches (bench/transport/replicas.ts). */
  readonly replicas: number;
}

/**
 * Sends each attempt to the replica its client's balancer picks, avoiding
 * `attempt.avoidReplica` (retry.otherReplica) when another exists. It acts per attempt,
 * so it sits below retry and hedge: every retry and every hedge is balanced anew. The
 * result says which replica served it, for a retry that must go elsewhere.
 *
 * The response time fed to least-latency is the attempt's as this layer sees it on the
 * env's clock (virtual in the simulator), a wait for a connection and failures included:
 * an attempt the caller cancelled (a hedge's loser, the run ending) gives none.
 * `onBalancer` hands each client instance's balancer out (tests read its state).
 */
export function balance(o: BalanceOptions, onBalancer?: (b: Balancer) => void): ClientPolicy {
  return (next, env) => {
    const b = new Balancer(o.policy, o.replicas, env.rng);
    onBalancer?.(b);
    return (attempt, handler) => new BalancedAttempt(b, env.clock, next, attempt, handler);
  };
}

/** One attempt on the replica its balancer picked: started there, ended there once. */
class BalancedAttempt implements AttemptHandler, InFlight {
  private readonly replica: number;
  private readonly t0: number;
  private below: InFlight = SETTLED;
  private aborted = false;

  constructor(
    private readonly b: Balancer,
    private readonly clock: Clock,
    next: Dispatch,
    attempt: Attempt,
    private readonly handler: AttemptHandler,
  ) {
    const replica = b.pick(attempt.avoidReplica);
    this.replica = replica;
    b.started(replica);
    this.t0 = clock.now();
    // May answer inside: then `below` is settled and aborting it does nothing.
    this.below = next({ ...attempt, replica }, this);
  }

  onResponse(r: AttemptResult): void {
    this.b.ended(this.replica, this.aborted ? Number.NaN : this.clock.now() - this.t0);
    this.handler.onResponse({ ...r, replica: this.replica });
  }

  abort(): void {
    this.aborted = true;
    this.below.abort();
  }
}
