import type { z } from 'zod';
import type { StackPart } from '../../../bench/policy/compose.js';
import { abandon } from './abandon.js';
import { balance } from './balance.js';
import { breaker } from './breaker.js';
import { budget } from './budget.js';
import { deadline } from './deadline.js';
import { hedge } from './hedge.js';
import type { ClientBasics, ClientFacts, ClientPolicyDef, InstanceState } from './kind.js';
import { observe } from './observe.js';
import { propagateDeadline } from './propagateDeadline.js';
import { retry } from './retry.js';
import { throttle } from './throttle.js';
import { timeout } from './timeout.js';

/**
 * The client policies, one file each. A new policy is its file and one line here; this
 * order is the order of their fields in `client:` (and in the JSON Schema).
 *
 * Each builds its layer at its own place in a client's stack, outermost first, and why:
 *
 *   10 abandon    the user's patience covers everything below it
 *   20 retry      backoff, budget and the origin's deadline decide each retry
 *   30 hedge      a second attempt of the same try after a delay; the loser is cancelled
 *   40 breaker    every attempt (first, retry, hedge) meets the breaker; refused ones are not sent
 *   50 throttle   likewise for adaptive throttling (after the breaker: it counts only
 *                 what the breaker let through)
 *   55 balance    picks each attempt's api replica: below retry and hedge, so every try
 *                 and every hedge is balanced anew (retry.otherReplica tells it which
 *                 replica to avoid); below breaker and throttle, so a refused attempt
 *                 takes no replica; above observe, so the recorded attempt carries it.
 *                 No layer with one replica.
 *   60 observe    records each attempt that is actually sent (the amplification counts these)
 *   70 timeout    each attempt's own timeout, cut short by the origin's deadline
 *   80 propagateDeadline   x-deadline-ms, computed at the moment of sending
 *      transport
 *
 * The budget has no layer (retry and hedging draw on it); the deadline is the origin's.
 */
export const CLIENT_POLICIES = {
  timeout,
  deadline,
  retry,
  budget,
  breaker,
  throttle,
  hedge,
  balance,
  abandon,
  propagateDeadline,
  observe,
} satisfies Record<string, { readonly fields: z.core.$ZodLooseShape }>;

type Defs = typeof CLIENT_POLICIES;
type Def = ClientPolicyDef<z.core.$ZodLooseShape, object>;
type UnionToIntersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void
  ? I
  : never;
type FieldsOf<D> = D extends ClientPolicyDef<infer F, infer _M> ? F : never;
type ModelOf<D> = D extends ClientPolicyDef<infer _F, infer M> ? M : never;

/** Every policy's fields of `client:`, as one shape. */
export type PolicyFieldShape = UnionToIntersection<{ [K in keyof Defs]: FieldsOf<Defs[K]> }[keyof Defs]>;

/**
 * The client model as plain data (times in ms, fractions 0..1): what the experiment
 * file's `client:` section resolves to and the clients are built from, each policy's
 * part as it plans it. Optional parts are absent when the client does not use them.
 */
export type ClientModel = ClientFacts &
  UnionToIntersection<{ [K in keyof Defs]: ModelOf<Defs[K]> }[keyof Defs]>;

const defs = Object.values(CLIENT_POLICIES) as readonly Def[];

/** The policies' fields, in registry order, for the client section. */
export function policyFields(): PolicyFieldShape {
  return Object.assign({}, ...defs.map((d) => d.fields)) as PolicyFieldShape;
}

/** The client model's policy parts (all but its facts), each from its policy. */
export function policyModel(c: Record<string, unknown>): Omit<ClientModel, keyof ClientFacts> {
  return Object.assign({}, ...defs.map((d) => d.model(c as never))) as Omit<ClientModel, keyof ClientFacts>;
}

/** What building a client takes from each policy: every state first, then the layers in stack order. */
export const CLIENT_STACK: readonly StackPart<ClientModel, InstanceState>[] = [
  ...defs.flatMap((d) =>
    d.state || d.dispose
      ? [{ ...(d.state && { state: d.state }), ...(d.dispose && { dispose: d.dispose }) }]
      : [],
  ),
  ...defs
    .flatMap((d) => (d.layer ? [d.layer] : []))
    .sort((a, b) => a.at - b.at)
    .map((l) => ({ layer: l.build })),
];

/** The policies' clauses of the client's description, left to right. */
export function describePolicies(c: ClientBasics & Record<string, unknown>): string[] {
  return defs
    .flatMap((d) => (d.describe ? [d.describe] : []))
    .sort((a, b) => a.at - b.at)
    .flatMap((x) => x.text(c as never, c) ?? []);
}
