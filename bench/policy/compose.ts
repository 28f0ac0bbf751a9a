import type { NewController } from '../abort.js';
import type { Clock } from '../../foundation/clock.js';
import type { DurationDist } from '../../foundation/distributions.js';
import type { Rng } from '../../foundation/rng.js';
import type { Jitter } from './backoff.js';
import type { CircuitBreaker } from './breaker.js';
import type { RetryBudget } from './budget.js';
import { stack, type ClientPolicy, type PolicyEnv, type SendAttempt } from './ClientPolicy.js';
import type { PolicyEvent } from './events.js';
import type { RetryOn } from './retry.js';
import type { AdaptiveThrottle } from './throttle.js';

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

/**
 * What one client instance keeps across its origins: the state a policy shares with
 * other layers (the retry budget, which retry and hedging draw on) or that the run reads
 * afterwards (breaker and throttle). Each is made once per instance, before any layer.
 */
export interface InstanceState {
  readonly budget?: RetryBudget | undefined;
  readonly breaker?: CircuitBreaker | undefined;
  readonly throttle?: AdaptiveThrottle | undefined;
}

/** One client: its stack and the state it shares across its origins (one explicit object). */
export interface ClientInstance extends InstanceState {
  readonly id: number;
  readonly send: SendAttempt;
}

/** What building one layer of one client instance may use. */
export interface LayerContext {
  readonly env: PolicyEnv;
  /** The instance's shared state, made by every policy's `state` before any layer is built. */
  readonly state: InstanceState;
  /** Records each attempt actually sent; given by the caller (the Recorder's). */
  readonly observe: ClientPolicy;
}

/**
 * One policy's part in building a client (the policy registry, orchestrator/spec/policies/,
 * gives them in stack order, outermost first): the instance state it owns, and its layer
 * of the stack, absent when the model does not use the policy.
 */
export interface StackPart {
  readonly state?: (model: ClientModel, env: PolicyEnv) => InstanceState;
  readonly layer?: (model: ClientModel, ctx: LayerContext) => ClientPolicy | undefined;
}

/**
 * Builds one client's policy stack over `base` (the transport) from `parts`, outermost
 * first (the order, and why, is documented with the registry). `observe` is given by
 * the caller, so this module does not depend on how attempts are recorded.
 */
export function buildClientInstance(
  model: ClientModel,
  parts: readonly StackPart[],
  id: number,
  base: SendAttempt,
  env: PolicyEnv,
  observe: ClientPolicy,
): ClientInstance {
  let state: InstanceState = {};
  for (const p of parts) if (p.state) state = { ...state, ...p.state(model, env) };
  const ctx: LayerContext = { env, state, observe };
  const policies = parts.flatMap((p) => p.layer?.(model, ctx) ?? []);
  return {
    id,
    send: stack(policies, base, env),
    budget: state.budget,
    breaker: state.breaker,
    throttle: state.throttle,
  };
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
  parts: readonly StackPart[],
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
        parts,
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
