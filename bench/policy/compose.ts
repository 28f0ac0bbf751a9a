import type { NewController } from '../abort.js';
import type { Clock } from '../../foundation/clock.js';
import type { DurationDist } from '../../foundation/distributions.js';
import type { Rng } from '../../foundation/rng.js';
import { abandon } from './abandon.js';
import { exponential, fixed, immediate, type Backoff, type Jitter } from './backoff.js';
import { breaker, CircuitBreaker, SamplingBreaker } from './breaker.js';
import { awsBudget, ratioBudget, type RetryBudget } from './budget.js';
import { stack, type ClientPolicy, type PolicyEnv, type SendAttempt } from './ClientPolicy.js';
import { propagateDeadline } from './deadline.js';
import type { PolicyEvent } from './events.js';
import { hedge } from './hedge.js';
import { retry, type RetryOn } from './retry.js';
import { AdaptiveThrottle, throttle } from './throttle.js';
import { attemptTimeout } from './timeout.js';

/**
 * The client model as plain data (times in ms, fractions 0..1): what the experiment
 * file's `client:` section resolves to, and what the simulator builds the same stack
 * from. Optional parts are absent when the client does not use them.
 */
export interface ClientModel {
  /** Independent client instances the origins are split over, round-robin. */
  readonly instances: number;
  readonly timeoutMs: number;
  readonly retry: {
    readonly maxAttempts: number;
    readonly backoff: BackoffModel;
    readonly retryOn: readonly RetryOn[];
  };
  readonly budget?: BudgetModel;
  readonly breaker?: {
    readonly failureRatio: number;
    readonly windowMs: number;
    readonly minVolume: number;
    readonly openMs: number;
    readonly probes: number;
  };
  readonly throttle?: { readonly k: number; readonly windowMs: number };
  readonly hedge?: { readonly delayMs: number; readonly maxHedges: number };
  readonly abandon?: { readonly fraction: number; readonly patience: DurationDist };
  /** Send the remaining deadline in DEADLINE_HEADER (only origins with a deadline have one). */
  readonly propagateDeadline: boolean;
}

export type BackoffModel =
  | { readonly kind: 'immediate' }
  | { readonly kind: 'fixed'; readonly delayMs: number }
  | {
      readonly kind: 'exponential';
      readonly baseMs: number;
      readonly capMs: number;
      readonly jitter: Jitter;
    };

export type BudgetModel =
  | { readonly style: 'ratio'; readonly ratio: number; readonly burst: number }
  | {
      readonly style: 'aws';
      readonly capacity: number;
      readonly retryCost: number;
      readonly timeoutCost: number;
      readonly perSuccess: number;
    };

export function backoffOf(m: BackoffModel): Backoff {
  switch (m.kind) {
    case 'immediate':
      return immediate();
    case 'fixed':
      return fixed(m.delayMs);
    case 'exponential':
      return exponential({ baseMs: m.baseMs, capMs: m.capMs, jitter: m.jitter });
  }
}

export function budgetOf(m: BudgetModel): RetryBudget {
  return m.style === 'ratio'
    ? ratioBudget(m.ratio, m.burst)
    : awsBudget({
        capacity: m.capacity,
        retryCost: m.retryCost,
        timeoutCost: m.timeoutCost,
        perSuccess: m.perSuccess,
      });
}

/** One client: its stack and the state it shares across its origins (one explicit object). */
export interface ClientInstance {
  readonly id: number;
  readonly send: SendAttempt;
  readonly budget: RetryBudget | undefined;
  readonly breaker: CircuitBreaker | undefined;
  readonly throttle: AdaptiveThrottle | undefined;
}

/**
 * Builds one client's policy stack over `base` (the transport). The order, outermost
 * first, and why:
 *
 *   abandon        the user's patience covers everything below it
 *   retry          backoff, budget and the origin's deadline decide each retry
 *   hedge          a second attempt of the same try after a delay; the loser is cancelled
 *   breaker        every attempt (first, retry, hedge) meets the breaker; refused ones are not sent
 *   throttle       likewise for adaptive throttling (after the breaker: it counts only
 *                  what the breaker let through)
 *   observe        records each attempt that is actually sent (the amplification counts these)
 *   timeout        each attempt's own timeout, cut short by the origin's deadline
 *   deadline       x-deadline-ms, computed at the moment of sending
 *   transport
 *
 * `observe` is given by the caller (the Recorder's), so this module does not depend on
 * how attempts are recorded.
 */
export function buildClientInstance(
  model: ClientModel,
  id: number,
  base: SendAttempt,
  env: PolicyEnv,
  observe: ClientPolicy,
): ClientInstance {
  const budget = model.budget ? budgetOf(model.budget) : undefined;
  const cb = model.breaker
    ? new CircuitBreaker(
        new SamplingBreaker({
          failureRatio: model.breaker.failureRatio,
          windowMs: model.breaker.windowMs,
          minVolume: model.breaker.minVolume,
        }),
        { openMs: model.breaker.openMs, probes: model.breaker.probes },
        env.clock,
        (from, to, atMs) => env.emit({ type: 'breaker', client: id, from, to, atMs }),
      )
    : undefined;
  const th = model.throttle ? new AdaptiveThrottle(model.throttle, env.clock) : undefined;
  const policies: ClientPolicy[] = [];
  if (model.abandon && model.abandon.fraction > 0) policies.push(abandon(model.abandon));
  // With a budget the retry layer stays even for a single try: it tells the budget about
  // each request and success, which is what refills it for hedges.
  if (model.retry.maxAttempts > 1 || budget)
    policies.push(
      retry({
        maxAttempts: model.retry.maxAttempts,
        backoff: backoffOf(model.retry.backoff),
        retryOn: model.retry.retryOn,
        ...(budget ? { budget } : {}),
      }),
    );
  if (model.hedge)
    policies.push(
      hedge({
        delayMs: model.hedge.delayMs,
        maxHedges: model.hedge.maxHedges,
        ...(budget ? { budget } : {}),
      }),
    );
  if (cb) policies.push(breaker(cb));
  if (th) policies.push(throttle(th));
  policies.push(observe, attemptTimeout(model.timeoutMs));
  if (model.propagateDeadline) policies.push(propagateDeadline());
  return { id, send: stack(policies, base, env), budget, breaker: cb, throttle: th };
}

export interface Clients {
  /** The load's entry point: origin i goes to client i mod K. */
  readonly send: SendAttempt;
  readonly instances: readonly ClientInstance[];
  /** Stops the clients' timers (breakers), at the end of a run. */
  dispose(): void;
}

/**
 * K independent clients over one transport (Brooker's point: budgets and breakers are
 * per client, and 1000 small clients do not behave like 100 big ones). Origins are
 * assigned round-robin by id, so the split is deterministic. Each client has its own
 * random stream `rngFor(k)`.
 */
export function buildClients(
  model: ClientModel,
  base: SendAttempt,
  ctx: {
    readonly clock: Clock;
    readonly rngFor: (client: number) => Rng;
    readonly emit: (e: PolicyEvent) => void;
    readonly observe: ClientPolicy;
    /** The AbortControllers' maker (Node's by default; the simulator's lean one). */
    readonly newController?: NewController;
  },
): Clients {
  const k = model.instances;
  if (!(k >= 1 && Number.isInteger(k)))
    throw new RangeError(`instances must be a whole number >= 1 (got ${k})`);
  const instances: ClientInstance[] = [];
  for (let i = 0; i < k; i++)
    instances.push(
      buildClientInstance(
        model,
        i,
        base,
        {
          clock: ctx.clock,
          rng: ctx.rngFor(i),
          client: i,
          emit: ctx.emit,
          ...(ctx.newController ? { newController: ctx.newController } : {}),
        },
        ctx.observe,
      ),
    );
  const only = instances[0]!.send;
  return {
    send: k === 1 ? only : (a, s) => instances[a.origin.id % k]!.send(a, s),
    instances,
    dispose: () => instances.forEach((c) => c.breaker?.dispose()),
  };
}
