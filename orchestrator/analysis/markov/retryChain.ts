import { GeneratorBuilder, maxExitRate, type Generator } from './generator.js';
import { meanFirstPassage, passageProbability, relaxation, stationary, type Relaxation } from './levels.js';

/**
 * The CTMC of one server and its retrying clients, after Metafor's single-server model
 * (research/metastability.md §10): state (n, o), n jobs in the server (queued or in service,
 * n < queueSize) and o retries waiting in the orbit (o < orbitSize). Work is exponential;
 * whether an attempt times out is not tracked per job but read off the queue it joins, by
 * Chebyshev's bound on its sojourn: with c workers and n jobs ahead, mean m = n/(min(n,c)μ),
 * deviation s = √n/(min(n,c)μ), P(timeout) = (s/(τ − m))² when τ − m > s, else 1.
 *
 * Transitions from (n, o), tail = P(timeout) at n:
 * - an origin arrives: (n+1, o) at λ; besides, (n+1, o+1) at α·λ·tail — Metafor's knob α
 *   sends a share of the arrivals that will time out into the orbit at once;
 * - an orbit job retries: (n+1, o) at o·μ_r·tail (it will time out again and stays in the
 *   orbit), (n+1, o−1) at o·μ_r·(1 − tail); into a full server it is lost, (n, o−1);
 * - an orbit job gives up (its attempts are spent): (n, o−1) at o·μ_d;
 * - a job completes: (n−1, o) at min(n, c)·μ.
 * An orbit job waits `orbitWaitS` on average (the timeout, plus the backoff in our port) and
 * then retries with probability R/(R+1): μ_r = R/((R+1)·wait), μ_d = 1/((R+1)·wait).
 * Arrivals into a full server, or into a full orbit, are lost.
 *
 * `granularity` g > 1 counts the queue and the orbit in batches of g jobs (every rate in
 * batches per second): the drift is the same, the noise g times smaller, so first-passage
 * times driven by the drift (a drain) are kept and those driven by fluctuations (a spontaneous
 * collapse, a recovery against the drift) are overestimated. It lets a large server (cμτ of
 * hundreds of jobs) fit in ~10⁵ states; 1 is the exact chain.
 */
export interface RetryChainParams {
  /** Origins per second, λ. */
  readonly arrivalPerS: number;
  readonly workers: number;
  /** μ = 1 / mean work, per worker. */
  readonly serviceRatePerS: number;
  readonly timeoutS: number;
  /** Retries after the first attempt, R = attempts − 1. */
  readonly retries: number;
  /** An orbit job's mean wait before it retries or gives up (Metafor: the timeout). */
  readonly orbitWaitS: number;
  /** Server states n = 0 .. queueSize − 1 (Metafor's qsize, in batches when g > 1). */
  readonly queueSize: number;
  /** Orbit states o = 0 .. orbitSize − 1 (in batches when g > 1). */
  readonly orbitSize: number;
  /** Metafor's calibration knob (its default 0.25). */
  readonly alpha: number;
  readonly granularity: number;
}

export const METAFOR_ALPHA = 0.25;

/** P(an attempt joining `jobs` jobs times out), Metafor's Chebyshev bound. */
export function timeoutTail(
  jobs: number,
  workers: number,
  serviceRatePerS: number,
  timeoutS: number,
): number {
  if (jobs <= 0) return 0;
  const rate = Math.min(jobs, workers) * serviceRatePerS;
  const mean = jobs / rate;
  const sd = Math.sqrt(jobs) / rate;
  const slack = timeoutS - mean;
  return slack > sd ? (sd / slack) ** 2 : 1;
}

export function retryChain(p: RetryChainParams): Generator {
  const K = p.queueSize;
  const O = p.orbitSize;
  const g = p.granularity;
  const b = new GeneratorBuilder(K, O);
  const muR = p.retries / ((p.retries + 1) * p.orbitWaitS);
  const muD = 1 / ((p.retries + 1) * p.orbitWaitS);
  const lambda = p.arrivalPerS / g;
  for (let n = 0; n < K; n++) {
    const tail = timeoutTail(n * g, p.workers, p.serviceRatePerS, p.timeoutS);
    const done = (Math.min(n * g, p.workers) * p.serviceRatePerS) / g;
    for (let o = 0; o < O; o++) {
      const i = n * O + o;
      if (n < K - 1) {
        if (o + 1 < O) b.add(i, i + O + 1, p.alpha * lambda * tail);
        b.add(i, i + O, lambda + o * muR * tail);
        if (o > 0) b.add(i, i + O - 1, o * muR * (1 - tail));
      } else if (o > 0) b.add(i, i - 1, o * muR);
      if (o > 0) b.add(i, i - 1, o * muD);
      if (n > 0) b.add(i, i - O, done);
    }
  }
  return b.build();
}

/** Where the chain counts as collapsed, and as recovered (queue levels, in batches). */
export interface Regions {
  /** Collapsed: n ≥ this, the queue whose mean wait is the timeout (an attempt joining it times out on average). */
  readonly collapsedFrom: number;
  /** Healthy: n < this, a third of the way there (Metafor's q < 10 of cμτ = 30). */
  readonly healthyBelow: number;
}

export function regionsOf(p: RetryChainParams): Regions {
  const collapsedFrom = Math.min(
    p.queueSize - 1,
    Math.max(1, Math.ceil((p.workers * p.serviceRatePerS * p.timeoutS) / p.granularity)),
  );
  return { collapsedFrom, healthyBelow: Math.max(1, Math.ceil(collapsedFrom / 3)) };
}

export interface ChainReading {
  readonly arrivalPerS: number;
  readonly states: number;
  /** Stationary mean jobs in the server. */
  readonly meanJobs: number;
  /** Stationary probability of the collapsed region. */
  readonly collapsedMass: number;
  /**
   * Mean time from a full server with an empty orbit to healthy: the predicted recovery time
   * with no intervention. Null when longer than the solver resolves (see `resolvableS`).
   */
  readonly recoveryS: number | null;
  /** Mean time from an empty system to collapsed: the expected time to a spontaneous collapse (null: beyond `resolvableS`). */
  readonly collapseS: number | null;
  /**
   * The longest first-passage time the solver resolves here: 10¹² times the chain's fastest
   * mean holding time. Beyond it the linear system's condition number (≈ time × fastest rate)
   * leaves fewer than four good digits of sixteen, so a time is reported as "longer than this".
   */
  readonly resolvableS: number;
  /** P(recovered within each of `withinS`) from the same start (null where unaffordable). */
  readonly recoveredWithin: readonly { readonly s: number; readonly p: number | null }[];
  /** The spectral gap, when asked for. */
  readonly relaxation: Relaxation | null;
  readonly solveMs: number;
}

export interface ReadOptions {
  /** Start of the recovery: this many jobs in the server (default: a full server), orbit empty. */
  readonly fromJobs?: number;
  readonly withinS?: readonly number[];
  readonly gap?: boolean;
  /** Solve the stationary distribution (default; the gap needs it): without it meanJobs and collapsedMass are NaN. */
  readonly stationary?: boolean;
  /** Override the regions (Metafor's reference values use q < 10). */
  readonly regions?: Regions;
}

export function readChain(p: RetryChainParams, o: ReadOptions = {}): ChainReading {
  const t0 = performance.now();
  const q = retryChain(p);
  const reg = o.regions ?? regionsOf(p);
  const pi = o.stationary === false && !o.gap ? null : stationary(q);
  let meanJobs = pi ? 0 : NaN;
  let collapsedMass = pi ? 0 : NaN;
  for (let i = 0; pi && i < q.size; i++) {
    const n = Math.floor(i / q.width);
    meanJobs += pi[i]! * n * p.granularity;
    if (n >= reg.collapsedFrom) collapsedMass += pi[i]!;
  }
  const fromLevel =
    o.fromJobs === undefined
      ? p.queueSize - 1
      : Math.min(p.queueSize - 1, Math.max(0, Math.round(o.fromJobs / p.granularity)));
  const from = fromLevel * q.width;
  const rate = maxExitRate(q);
  const resolvableS = 1e12 / rate;
  const resolved = (t: number): number | null => (t > 0 && t <= resolvableS ? t : null);
  const recoveryS = resolved(meanFirstPassage(q, { below: reg.healthyBelow })[from]!);
  const collapseS = resolved(meanFirstPassage(q, { atLeast: reg.collapsedFrom })[0]!);
  const within = o.withinS ?? [];
  const probs = within.length ? passageProbability(q, { below: reg.healthyBelow }, from, within, rate) : [];
  return {
    arrivalPerS: p.arrivalPerS,
    states: q.size,
    meanJobs,
    collapsedMass,
    recoveryS,
    collapseS,
    resolvableS,
    recoveredWithin: within.map((s, k) => ({ s, p: probs[k] ?? null })),
    relaxation: o.gap && pi ? relaxation(q, pi, rate) : null,
    solveMs: performance.now() - t0,
  };
}
