import type { NewController } from '../../bench/abort.js';
import type { Clock } from '../../foundation/clock.js';
import type { DurationDist } from '../../foundation/distributions.js';
import { viaTransport } from '../../bench/policy/ClientPolicy.js';
import {
  buildClients,
  type BackoffModel,
  type Clients,
  type ClientModel,
} from '../../bench/policy/compose.js';
import { observe } from '../../bench/policy/observe.js';
import { RETRY_ON } from '../../bench/policy/retry.js';
import type { PolicyPresence, Recorder } from '../../bench/record/Recorder.js';
import { seededRng } from '../../foundation/rng.js';
import type { Transport } from '../../bench/transport/Transport.js';
import type { ClientSpec } from '../spec/sections/client.js';
import type { RunPlan } from '../spec/plan.js';
import { formatDuration } from '../../foundation/units.js';

/** The experiment's `client:` section as the plain client model bench/policy builds from. */
export function clientModel(c: ClientSpec): ClientModel {
  const r = c.retry;
  const backoff: BackoffModel =
    r.policy === 'fixed'
      ? { kind: 'fixed', delayMs: r.delay ?? 0 }
      : r.policy === 'exponential'
        ? { kind: 'exponential', baseMs: r.base ?? 0, capMs: r.cap ?? 0, jitter: r.jitter ?? 'full' }
        : { kind: 'immediate' };
  const b = c.budget;
  return {
    instances: c.instances,
    timeoutMs: c.timeout,
    retry: { maxAttempts: r.policy === 'none' ? 1 : r.maxAttempts, backoff, retryOn: r.retryOn ?? RETRY_ON },
    ...(b
      ? {
          budget:
            b.style === 'ratio'
              ? { style: 'ratio' as const, ratio: b.ratio ?? 0.1, burst: b.burst ?? 10 }
              : {
                  style: 'aws' as const,
                  capacity: b.capacity ?? 500,
                  retryCost: b.retryCost ?? 5,
                  timeoutCost: b.timeoutCost ?? 10,
                  perSuccess: b.perSuccess ?? 1,
                },
        }
      : {}),
    ...(c.breaker
      ? {
          breaker: {
            failureRatio: c.breaker.failureRatio,
            windowMs: c.breaker.window,
            minVolume: c.breaker.minVolume,
            openMs: c.breaker.open,
            probes: c.breaker.probes,
          },
        }
      : {}),
    ...(c.throttle ? { throttle: { k: c.throttle.k, windowMs: c.throttle.window } } : {}),
    ...(c.hedge ? { hedge: { delayMs: c.hedge.delay, maxHedges: c.hedge.max } } : {}),
    ...(c.abandon
      ? { abandon: { fraction: c.abandon.fraction, patience: patienceOf(c.abandon.patience) } }
      : {}),
    propagateDeadline: c.propagateDeadline,
  };
}

function patienceOf(p: NonNullable<ClientSpec['abandon']>['patience']): DurationDist {
  return p.dist === 'lognormal'
    ? { dist: 'lognormal', meanMs: p.mean, sigma: p.sigma ?? 1 }
    : { dist: p.dist, meanMs: p.mean };
}

/** Which policies the model uses, for the Recorder (absent ones report null, not 0). */
export function policyPresence(m: ClientModel): PolicyPresence {
  return {
    clients: m.instances,
    budget: m.budget !== undefined,
    breaker: m.breaker !== undefined,
    throttle: m.throttle !== undefined,
    hedge: m.hedge !== undefined,
    abandon: m.abandon !== undefined && m.abandon.fraction > 0,
  };
}

/**
 * The client model of the experiment: K client instances over one transport, each a
 * policy stack (order in bench/policy/compose.ts), each with its own random stream and
 * its own budget, breaker and throttle state; policy events go to the Recorder.
 */
export function buildClient(
  plan: RunPlan,
  transport: Transport,
  recorder: Recorder,
  clock: Clock,
  newController?: NewController,
): Clients {
  const model = clientModel(plan.experiment.client);
  return buildClients(model, viaTransport(transport, clock), {
    clock,
    ...(newController ? { newController } : {}),
    // Client 0 keeps the stream the single client always had.
    rngFor: (k) => seededRng(plan.seed, k === 0 ? 'client' : `client-${k}`),
    emit: (e) => recorder.policy(e),
    observe: observe(recorder, clock),
  });
}

/**
 * The longest an origin can stay in flight under this client model (attempt timeouts
 * plus the waits between them), capped by its deadline. Retry-After can exceed it.
 */
export function worstOriginMs(c: ClientSpec): number {
  const m = clientModel(c);
  const tries = m.retry.maxAttempts;
  const b = m.retry.backoff;
  const waitMs = b.kind === 'fixed' ? b.delayMs : b.kind === 'exponential' ? b.capMs : 0;
  const worst = tries * m.timeoutMs + (tries - 1) * waitMs;
  return Math.min(worst, c.deadline ?? Number.POSITIVE_INFINITY);
}

/** Attempts one origin can have in flight at once, summed over its tries (hedges included). */
export function attemptsPerOrigin(c: ClientSpec): number {
  const m = clientModel(c);
  return m.retry.maxAttempts * (1 + (m.hedge?.maxHedges ?? 0));
}

/** The client model in one line, for the report. */
export function describeClient(c: ClientSpec): string {
  const r = c.retry;
  const parts = [`per-attempt timeout ${formatDuration(c.timeout)}`];
  let retry = `retry ${r.policy}`;
  if (r.policy !== 'none') retry += ` up to ${r.maxAttempts} attempts`;
  if (r.policy === 'fixed' && r.delay !== undefined) retry += `, ${formatDuration(r.delay)} apart`;
  if (r.policy === 'exponential' && r.base !== undefined && r.cap !== undefined)
    retry += ` (base ${formatDuration(r.base)}, cap ${formatDuration(r.cap)}, ${r.jitter ?? 'full'} jitter)`;
  if (r.retryOn) retry += ` on ${r.retryOn.join(', ')}`;
  parts.push(retry, `deadline ${c.deadline !== undefined ? formatDuration(c.deadline) : 'none'}`);
  const b = c.budget;
  if (b)
    parts.push(
      b.style === 'ratio'
        ? `retry budget ${(b.ratio ?? 0.1) * 100}% of requests (burst ${b.burst ?? 10})`
        : `retry budget AWS-style (${b.capacity ?? 500} tokens, retry ${b.retryCost ?? 5}, after timeout ${b.timeoutCost ?? 10}, +${b.perSuccess ?? 1} per success)`,
    );
  if (c.breaker)
    parts.push(
      `circuit breaker (opens at ${c.breaker.failureRatio * 100}% failures over ${formatDuration(c.breaker.window)}, min ${c.breaker.minVolume}; open ${formatDuration(c.breaker.open)}; ${c.breaker.probes} probes)`,
    );
  if (c.throttle)
    parts.push(`adaptive throttling (K ${c.throttle.k}, window ${formatDuration(c.throttle.window)})`);
  if (c.hedge) parts.push(`hedging after ${formatDuration(c.hedge.delay)} (at most ${c.hedge.max} per try)`);
  if (c.abandon)
    parts.push(
      `${c.abandon.fraction * 100}% of users abandon after a ${c.abandon.patience.dist} patience (mean ${formatDuration(c.abandon.patience.mean)})`,
    );
  if (c.deadline !== undefined && c.propagateDeadline) parts.push('deadline propagated in x-deadline-ms');
  if (c.instances > 1) parts.push(`split over ${c.instances} clients`);
  return parts.join(', ');
}
