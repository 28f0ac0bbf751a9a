import type { NewController } from '../abort.js';
import type { Clock } from '../../foundation/clock.js';
import type { Rng } from '../../foundation/rng.js';
import { stack, type ClientPolicy, type PolicyEnv } from './ClientPolicy.js';
import type { Dispatch } from './dispatch.js';
import type { PolicyEvent } from './events.js';

/**
 * Assembles clients from policies without knowing which policies there are: the policy
 * registry (orchestrator/spec/policies/) gives each policy's part, in stack order,
 * outermost first, over a client model `M` (plain data: ms, fractions) and the state `S`
 * each client instance keeps across its origins.
 */

/** What building one layer of one client instance may use. */
export interface LayerContext<S> {
  readonly env: PolicyEnv;
  /** The instance's state, made by every part's `state` before any layer is built. */
  readonly state: S;
  /** Records each attempt actually sent; given by the caller (the Recorder's). */
  readonly observe: ClientPolicy;
}

/**
 * One policy's part in building a client: the state it keeps per instance (other layers
 * may read it, as retry and hedging read the retry budget), its layer of the stack
 * (absent when the model does not use the policy), and how its state is stopped.
 */
export interface StackPart<M, S> {
  readonly state?: (model: M, env: PolicyEnv) => Partial<S>;
  readonly layer?: (model: M, ctx: LayerContext<S>) => ClientPolicy | undefined;
  readonly dispose?: (state: S) => void;
}

/** One client: its stack and the state it shares across its origins (one explicit object). */
export interface ClientInstance<S> {
  readonly id: number;
  readonly dispatch: Dispatch;
  readonly state: S;
}

/**
 * Builds one client's policy stack over `base` (the transport) from `parts`, outermost
 * first. `observe` is given by the caller, so this module does not depend on how
 * attempts are recorded.
 */
export function buildClientInstance<M, S extends object>(
  model: M,
  parts: readonly StackPart<M, S>[],
  id: number,
  base: Dispatch,
  env: PolicyEnv,
  observe: ClientPolicy,
): ClientInstance<S> {
  let state = {} as S;
  for (const p of parts) if (p.state) state = { ...state, ...p.state(model, env) };
  const ctx: LayerContext<S> = { env, state, observe };
  const policies = parts.flatMap((p) => p.layer?.(model, ctx) ?? []);
  return { id, dispatch: stack(policies, base, env), state };
}

export interface Clients<S> {
  /** The load's entry point: origin i goes to client i mod K. */
  readonly dispatch: Dispatch;
  readonly instances: readonly ClientInstance<S>[];
  /** Stops the clients' timers (breakers), at the end of a run. */
  dispose(): void;
}

/**
 * K independent clients over one transport (Brooker's point: budgets and breakers are
 * per client, and 1000 small clients do not behave like 100 big ones). Origins are
 * assigned round-robin by id, so the split is deterministic. Each client has its own
 * random stream `rngFor(k)`.
 */
export function buildClients<M extends { readonly instances: number }, S extends object>(
  model: M,
  parts: readonly StackPart<M, S>[],
  base: Dispatch,
  ctx: {
    readonly clock: Clock;
    readonly rngFor: (client: number) => Rng;
    readonly emit: (e: PolicyEvent) => void;
    readonly observe: ClientPolicy;
    /** The AbortControllers' maker (Node's by default; the simulator's lean one). */
    readonly newController?: NewController;
  },
): Clients<S> {
  const k = model.instances;
  if (!(k >= 1 && Number.isInteger(k)))
    throw new RangeError(`instances must be a whole number >= 1 (got ${k})`);
  const instances: ClientInstance<S>[] = [];
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
  const only = instances[0]!.dispatch;
  return {
    dispatch: k === 1 ? only : (a, h) => instances[a.origin.id % k]!.dispatch(a, h),
    instances,
    dispose: () => instances.forEach((c) => parts.forEach((p) => p.dispose?.(c.state))),
  };
}
