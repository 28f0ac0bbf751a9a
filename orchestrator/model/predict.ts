import type { DurationDist } from '../../foundation/distributions.js';
import { describeDuration } from '../../foundation/distributions.js';
import { toDurationDist } from '../../foundation/fields.js';
import type { RunPlan } from '../spec/plan.js';
import { triesPerOrigin } from '../spec/originRules.js';
import type { Experiment } from '../spec/schema.js';
import { apiReplicaCount } from '../spec/sections/lab.js';
import { bistableRange, healthyState, type BistableRange, type FluidSystem } from './fluid.js';
import { round } from '../../foundation/round.js';
import { builtinLab } from '../spec/builtinLab.js';
import type { PlannedCapacity } from '../spec/plan.js';

export type Region = 'stable' | 'bistable' | 'unstable';

/** The fluid model's reading of one experiment (metabench model, part a). */
export interface Prediction {
  /** One api replica's system (all of the api when there is one). */
  readonly system: FluidSystem;
  /**
   * The api replicas (lab.api.replicas). The client's balancer splits the origins and their
   * retries evenly in the fluid limit (round-robin, random, least-outstanding and p2c all
   * do), so N replicas are N copies of one api at λ/N, and every edge is N times one's.
   */
  readonly replicas: number;
  /** The whole lab's range: one replica's edges times `replicas`. */
  readonly range: BistableRange;
  /** The experiment's mean offered rate, origins per second. */
  readonly offeredPerS: number;
  /** stable: below cμ/m; bistable: inside the range (a big enough trigger collapses it for good); unstable: above λ*. */
  readonly region: Region;
  /** The healthy fixed point at the offered rate (null when there is none). */
  readonly healthy: { readonly attemptsPerS: number; readonly timeoutProbability: number } | null;
  /** What the experiment has that the model leaves out. */
  readonly caveats: readonly string[];
  /**
   * The capacity the model's cμ is (the run plan's: nominal c/S, or the one `metabench
   * calibrate` measured for this lab on this machine), and where it came from.
   */
  readonly capacity: PlannedCapacity;
  /**
   * The declared work's time scale the model used: measured capacity / nominal one is
   * 1 / workScale (1 for the nominal capacity).
   */
  readonly workScale: number;
}

/**
 * The api as the fluid model sees it. `workScale` stretches the declared work (every
 * distribution here is parameterised by its mean, so scaling the mean scales the whole
 * law): with a measured capacity the model keeps the c workers and takes the work that
 * gives that capacity, S' = c / measured, since a real server's work per request is its
 * own code's and not only the declared sleep.
 */
export function fluidSystemOf(e: Experiment, workScale = 1): FluidSystem {
  const api = builtinLab(e, 'the queueing model').api;
  const declared: DurationDist = toDurationDist(api.work);
  const work: DurationDist = { ...declared, meanMs: declared.meanMs * workScale };
  return {
    workers: api.workers,
    work,
    timeoutMs: e.client.timeout,
    attempts: triesPerOrigin(e.client),
  };
}

export function predict(plan: RunPlan): Prediction {
  const e = plan.experiment;
  const c = plan.capacity;
  const workScale =
    c.source === 'measured' && c.nominalPerS !== null && c.usedPerS !== null ? c.nominalPerS / c.usedPerS : 1;
  const system = fluidSystemOf(e, workScale);
  const replicas = apiReplicaCount(builtinLab(e, 'the queueing model').api);
  const one = bistableRange(system);
  const range: BistableRange = {
    ...one,
    capacityPerS: one.capacityPerS * replicas,
    lowerPerS: one.lowerPerS * replicas,
    upperPerS: one.upperPerS * replicas,
    attemptsAtUpperPerS: one.attemptsAtUpperPerS * replicas,
  };
  const offeredPerS = plan.ratePerS;
  const healthy = healthyState(system, offeredPerS / replicas);
  const region: Region =
    offeredPerS < range.lowerPerS ? 'stable' : offeredPerS < range.upperPerS ? 'bistable' : 'unstable';
  return {
    system,
    replicas,
    range,
    offeredPerS,
    region,
    healthy: healthy && { ...healthy, attemptsPerS: healthy.attemptsPerS * replicas },
    caveats: caveatsOf(e, plan),
    capacity: c,
    workScale,
  };
}

/** Where the model's capacity came from, in one line (as `metabench run` says it for `% capacity`). */
export function describeModelCapacity(p: Prediction): string {
  const c = p.capacity;
  const f = (x: number | null): string => (x === null ? 'unknown' : `${round(x, 3)}/s`);
  return c.source === 'measured' && c.calibration
    ? `measured ${f(c.usedPerS)} (calibration ${c.calibration.file}, measured ${c.calibration.measuredAt}; nominal ${f(c.nominalPerS)}: the model's work per request is ${round(p.workScale, 4)} × the declared)`
    : `${f(c.usedPerS)} ${c.from}`;
}

function caveatsOf(e: Experiment, plan: RunPlan): string[] {
  const out: string[] = [];
  const c = e.client;
  const lab = builtinLab(e, 'the queueing model');
  const api = lab.api;
  if (plan.load.arrival.kind === 'closed') out.push('the load is a closed loop: the model is of an open one');
  else if (!e.load.rate)
    out.push(`the load is not a flat rate: the model takes its mean, ${round(plan.ratePerS, 3)}/s`);
  if (e.load.mix?.some((m) => m.cost !== undefined))
    out.push('request classes with their own cost: the model uses the default work only');
  const ignored = [
    c.budget && 'a retry budget',
    c.breaker && 'a circuit breaker',
    c.throttle && 'adaptive throttling',
    c.hedge && 'hedging',
    c.abandon && 'abandonment',
    c.deadline !== undefined && 'a client deadline',
    (c.retry.policy === 'fixed' || c.retry.policy === 'exponential') &&
      'the backoff (it delays retries, it does not remove them: the fixed points are the same)',
  ].filter((x): x is string => typeof x === 'string');
  if (ignored.length) out.push(`the client has ${ignored.join(', ')}, which the model leaves out`);
  const mitigations = [
    api.queue === 'lifo' && 'a LIFO queue',
    api.queueLimit !== undefined && 'a bounded queue',
    api.concurrencyLimit !== undefined && 'a concurrency limit',
    api.shed && 'load shedding',
    api.deadlineDrop && 'deadline dropping',
    api.requestTimeout !== undefined && 'a request timeout',
  ].filter((x): x is string => typeof x === 'string');
  if (mitigations.length)
    out.push(
      `the api has ${mitigations.join(', ')}: the model assumes a FIFO queue that works on every request it receives`,
    );
  if (api.errorCost)
    out.push(
      'the api has an error cost: the model leaves out the worker time spent on errors (the capacity under errors is lower than cμ)',
    );
  if (lab.cache) out.push('the api has a read-through cache: the model is of the worker pool alone');
  if (api.server === 'jvm')
    out.push(
      "the api is the JVM reference server, whose garbage collection slows every worker as the heap fills (OSDI '22's GC mechanism): the model keeps the service time fixed, so it cannot predict a collapse sustained by GC time",
    );
  if (apiReplicaCount(api) > 1 && c.balance === 'least-latency')
    out.push(
      'least-latency balancing can herd the load onto one replica (one that fails fast looks fastest): the model splits it evenly',
    );
  return out;
}

/** The prediction in words (markdown lines). */
export function describePrediction(p: Prediction): string[] {
  const s = p.system;
  const r = p.range;
  const where =
    p.region === 'stable'
      ? `below cμ/m: **stable**, every trigger is survived (even with every attempt timing out the api receives ${round(p.offeredPerS * s.attempts, 3)}/s < ${round(r.capacityPerS, 3)}/s)`
      : p.region === 'bistable'
        ? `inside the bistable range: **vulnerable**, healthy now, collapsed for good after a large enough trigger (m·λ = ${round(p.offeredPerS * s.attempts, 3)}/s > cμ)`
        : `above λ*: **unstable**, no healthy state (it collapses without a trigger)`;
  return [
    '| | |',
    '|---|---|',
    ...(p.replicas > 1
      ? [
          `| api replicas N | ${p.replicas}, the load split evenly (each a copy of one api at λ/N; the edges below are N times one's) |`,
        ]
      : []),
    `| workers c | ${p.replicas > 1 ? `${s.workers} per replica` : s.workers} |`,
    `| work S | ${describeDuration(s.work)} |`,
    `| capacity ${p.replicas > 1 ? 'Ncμ' : 'cμ'} | ${round(r.capacityPerS, 3)} req/s |`,
    `| capacity source | ${describeModelCapacity(p)} |`,
    `| attempt timeout τ | ${s.timeoutMs} ms |`,
    `| attempts m | ${s.attempts} |`,
    `| lower edge cμ/m | ${round(r.lowerPerS, 3)} origins/s |`,
    `| upper edge λ* | ${r.bistable ? `${round(r.upperPerS, 3)} origins/s (healthy attempts then ${round(r.attemptsAtUpperPerS, 3)}/s)` : '– (one attempt: no retry can sustain an overload)'} |`,
    `| bistable range | ${r.bistable ? `${round(r.lowerPerS, 3)} ≤ λ < ${round(r.upperPerS, 3)} origins/s` : 'empty'} |`,
    `| offered load λ | ${round(p.offeredPerS, 3)} origins/s: ${where} |`,
    `| healthy state at λ | ${p.healthy ? `attempts ${round(p.healthy.attemptsPerS, 3)}/s, P(attempt times out) ${p.healthy.timeoutProbability.toExponential(2)}` : 'none'} |`,
  ];
}
