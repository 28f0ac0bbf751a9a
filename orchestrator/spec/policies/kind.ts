import type { z } from 'zod';
import type { ClientPolicy } from '../../../bench/policy/ClientPolicy.js';
import type { ClientModel, LayerContext, StackPart } from '../../../bench/policy/compose.js';

/**
 * What one client policy is made of, in one file under policies/: its fields of
 * `client:` (with their schema), its part of the plain client model the bench builds
 * from, its part in building each client (shared state, and its layer at its place in
 * the stack), and its clause of the client's description. The registry
 * (policies/index.ts) collects them; the client section, the client model, the stack
 * and the description iterate it.
 */
export interface ClientPolicyDef<F extends z.core.$ZodLooseShape, K extends keyof ClientModel> {
  /** Its fields of `client:`, in the order they are written there (and in the JSON Schema). */
  readonly fields: F;
  /** Its part of the client model (ms, fractions); its optional parts absent when unused. */
  readonly model: (c: PolicyFields<F>) => Pick<ClientModel, K>;
  /** State each client instance keeps for it (made before any layer; other layers may use it). */
  readonly state?: StackPart['state'];
  /** Its layer of each client's stack, at `at` (outermost first), or none when the model does not use it. */
  readonly layer?: {
    readonly at: number;
    readonly build: (model: ClientModel, ctx: LayerContext) => ClientPolicy | undefined;
  };
  /** Its fields in a small valid `client:` section (one YAML line), for the registry's round-trip test. */
  readonly example: string;
  /** Its clause of the one-line description, at `at` (left to right), or none when unused. */
  readonly describe?: {
    readonly at: number;
    readonly text: (c: PolicyFields<F>, client: ClientBasics) => string | undefined;
  };
}

/** A policy's own fields, as validated (units in ms and fractions). */
export type PolicyFields<F extends z.core.$ZodLooseShape> = z.output<z.ZodObject<F>>;

/** The fields every policy's description may read besides its own. */
export interface ClientBasics {
  readonly timeout: number;
  readonly deadline?: number | undefined;
}

/** Types a policy from its fields, so its callbacks need no annotation. */
export function clientPolicy<F extends z.core.$ZodLooseShape, K extends keyof ClientModel = never>(
  d: ClientPolicyDef<F, K>,
): ClientPolicyDef<F, K> {
  return d;
}
