import type { Experiment } from '../../spec/schema.js';
import { meanWorkMs } from '../../spec/plan.js';
import { triesPerOrigin } from '../../spec/originRules.js';
import { apiReplicaCount } from '../../spec/sections/lab.js';
import { METAFOR_ALPHA, readChain, type ChainReading, type RetryChainParams } from './retryChain.js';
import { builtinLab } from '../../spec/builtinLab.js';

/**
 * The retry CTMC of an experiment's api (one replica; N replicas are N copies at λ/N, as in
 * the fluid model), with Metafor's knobs. Defaults, stated in model.md:
 * - queue bound: the api's queueLimit plus its workers when it has one; else 3·cμτ jobs
 *   (three times the queue whose mean wait is the timeout) and at least 100;
 * - orbit bound: cμ·R·w, the orbit a collapse at capacity fills (every origin spends its R
 *   retries' waits w there), at least 20 (Metafor's);
 * - alpha: Metafor's 0.25;
 * - granularity: 1, or the smallest batch size that keeps levels × width³ (the solver's cost)
 *   under 2·10⁸, i.e. about half a second per offered load.
 */
export interface ChainKnobs {
  readonly queueBound?: number;
  readonly orbitBound?: number;
  readonly alpha?: number;
  readonly granularity?: number;
}

const COST_BUDGET = 2e8;

/** The mean wait of a retry in the orbit: the attempt's timeout plus the mean backoff before the next. */
export function orbitWaitS(e: Experiment): number {
  const r = e.client.retry;
  const retries = triesPerOrigin(e.client) - 1;
  let backoffMs = 0;
  if (r.policy === 'fixed') backoffMs = r.delay ?? 0;
  else if (r.policy === 'exponential' && retries > 0) {
    // min(cap, base·2^i) before the i-th retry, averaged over the retries; jitter scales it.
    let s = 0;
    for (let i = 0; i < retries; i++) s += Math.min(r.cap ?? Infinity, (r.base ?? 0) * 2 ** i);
    const jitter = r.jitter === 'full' ? 0.5 : r.jitter === 'equal' ? 0.75 : 1;
    backoffMs = (s / retries) * jitter;
  }
  return (e.client.timeout + backoffMs) / 1000;
}

export function chainParamsOf(e: Experiment, arrivalPerS: number, k: ChainKnobs = {}): RetryChainParams {
  const api = builtinLab(e, 'the retry chain').api;
  const c = api.workers;
  const mu = 1000 / meanWorkMs(e);
  const tau = e.client.timeout / 1000;
  const retries = triesPerOrigin(e.client) - 1;
  const wait = orbitWaitS(e);
  const queueJobs =
    k.queueBound ??
    (api.queueLimit !== undefined ? api.queueLimit + c : Math.max(100, Math.ceil(3 * c * mu * tau)));
  const orbitJobs = k.orbitBound ?? Math.max(20, Math.ceil(c * mu * retries * wait));
  let g = k.granularity ?? 1;
  if (k.granularity === undefined)
    while (Math.ceil(queueJobs / g) * Math.ceil(orbitJobs / g) ** 3 > COST_BUDGET) g++;
  return {
    arrivalPerS: arrivalPerS / apiReplicaCount(api),
    workers: c,
    serviceRatePerS: mu,
    timeoutS: tau,
    retries,
    orbitWaitS: wait,
    queueSize: Math.max(2, Math.ceil(queueJobs / g)),
    orbitSize: Math.max(1, Math.ceil(orbitJobs / g)),
    alpha: k.alpha ?? METAFOR_ALPHA,
    granularity: g,
  };
}

/** What the CTMC leaves out of an experiment (model.md's assumptions). */
export const CTMC_ASSUMPTIONS: readonly string[] = [
  'work is exponential (the chain has no memory of a job’s age); the timeout is read off the queue an attempt joins by Chebyshev’s bound, not tracked per attempt',
  'a FIFO server with c workers that finishes every attempt it takes in, timed out or not; arrivals into a full queue are lost',
  'retries wait in an orbit for the timeout plus the mean backoff, exponentially; the orbit is bounded and Metafor’s alpha sends a share of the arrivals that will time out there at once',
  'left out: retry budgets, circuit breakers, adaptive throttling, hedging, deadlines, caches, load shedding and queue-time dropping; N api replicas are N copies at λ/N',
];

export interface CtmcCurvePoint extends ChainReading {
  readonly offeredPerS: number;
}

/** The chain read at each offered load (origins per second, the whole lab's). */
export function ctmcCurve(
  e: Experiment,
  ratesPerS: readonly number[],
  k: ChainKnobs = {},
  o: { readonly withinS?: readonly number[]; readonly fromJobs?: number } = {},
): { params: RetryChainParams; points: CtmcCurvePoint[] } {
  const top = Math.max(...ratesPerS);
  const params = chainParamsOf(e, top, k);
  const points = ratesPerS.map((r) => ({
    offeredPerS: r,
    ...readChain(
      { ...params, arrivalPerS: r / apiReplicaCount(builtinLab(e, 'the retry chain').api) },
      {
        ...(o.withinS ? { withinS: o.withinS } : {}),
        ...(o.fromJobs !== undefined ? { fromJobs: o.fromJobs } : {}),
      },
    ),
  }));
  return { params, points };
}

/** The CTMC's prediction beside a measured recovery (twin reports, sweep tables, `model --over`). */
export interface CtmcBeside {
  /** Mean time from a full server (orbit empty) to healthy, s; null beyond the solver's resolution. */
  readonly recoveryS: number | null;
  readonly resolvableS: number;
  /** The observation it is judged over: the run's recovery deadline, s. */
  readonly withinS: number;
  /** P(recovered within `withinS`) from the same start; null when unaffordable. */
  readonly pRecoveredWithin: number | null;
  readonly states: number;
  readonly granularity: number;
}

const besideCache = new Map<string, CtmcBeside>();

/** The prediction at one offered load (the whole lab's origins/s), cached: reports ask again for the same point. */
export function ctmcBeside(
  e: Experiment,
  offeredPerS: number,
  withinS: number,
  k: ChainKnobs = {},
): CtmcBeside {
  const params = chainParamsOf(e, offeredPerS, k);
  const key = JSON.stringify([params, withinS]);
  const hit = besideCache.get(key);
  if (hit) return hit;
  const r = readChain(params, { withinS: [withinS], stationary: false });
  const out: CtmcBeside = {
    recoveryS: r.recoveryS,
    resolvableS: r.resolvableS,
    withinS,
    pRecoveredWithin: r.recoveredWithin[0]?.p ?? null,
    states: r.states,
    granularity: params.granularity,
  };
  besideCache.set(key, out);
  return out;
}
