import type { z } from 'zod';
import type { CircuitBreaker } from '../../../bench/policy/breaker.js';
import type { RetryBudget } from '../../../bench/policy/budget.js';
import type { ClientPolicy, PolicyEnv } from '../../../bench/policy/ClientPolicy.js';
import type { LayerContext } from '../../../bench/policy/compose.js';
import type { AdaptiveThrottle } from '../../../bench/policy/throttle.js';

/**
 * What one client policy is made of, in one file under policies/: its fields of
 * `client:` (with their schema), its part of the plain client model (ms, fractions),
 * its part in building each client (state, and its layer at its place in the stack),
 * and its clause of the client's description. The registry (policies/index.ts) collects
 * them; the client section, the client model, the stack and the description iterate it.
 */
export interface ClientPolicyDef<F extends z.core.$ZodLooseShape, M extends object> {
  /** Its fields of `client:`, in the order they are written there (and in the JSON Schema). */
  readonly fields: F;
  /** Its fields in a small valid `client:` section (one YAML line), for the registry's round-trip test. */
  readonly example: string;
  /** Its part of the client model; its optional parts absent when the policy is not used. */
  readonly model: (c: PolicyFields<F>) => M;
  /** State each client instance keeps for it, made before any layer is built. */
  readonly state?: (m: M, env: PolicyEnv) => Partial<InstanceState>;
  /** Stops that state at the end of a run. */
  readonly dispose?: (s: InstanceState) => void;
  /** Its layer of each client's stack, at `at` (outermost first), or none when the model does not use it. */
  readonly layer?: {
    readonly at: number;
    readonly build: (m: M & ClientFacts, ctx: LayerContext<InstanceState>) => ClientPolicy | undefined;
  };
  /** Its clause of the one-line description, at `at` (left to right), or none when unused. */
  readonly describe?: {
    readonly at: number;
    readonly text: (c: PolicyFields<F>, client: ClientBasics) => string | undefined;
  };
}

/**
 * What a client instance keeps across its origins: state a policy shares with other
 * layers (the retry budget, which retry and hedging draw on) or that the run reads
 * afterwards. A policy whose state another policy reads declares it here.
 */
export interface InstanceState {
  readonly budget?: RetryBudget | undefined;
  readonly breaker?: CircuitBreaker | undefined;
  readonly throttle?: AdaptiveThrottle | undefined;
}

/** What the client model holds besides the policies' parts: facts of the run every layer may read. */
export interface ClientFacts {
  /** Independent client instances the origins are split over, round-robin. */
  readonly instances: number;
  /** The api replicas the client balances over (orchestrator/run/client.ts, apiReplicas). */
  readonly replicas: number;
}

/** A policy's own fields, as validated (units in ms and fractions). */
export type PolicyFields<F extends z.core.$ZodLooseShape> = z.output<z.ZodObject<F>>;

/** The fields every policy's description may read besides its own. */
export interface ClientBasics {
  readonly timeout: number;
  readonly deadline?: number | undefined;
}

/** Types a policy from its fields and model part, so its callbacks need no annotation. */
export function clientPolicy<F extends z.core.$ZodLooseShape, M extends object>(
  d: ClientPolicyDef<F, M>,
): ClientPolicyDef<F, M> {
  return d;
}
