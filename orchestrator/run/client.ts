import type { NewController } from '../../bench/abort.js';
import type { Clock } from '../../foundation/clock.js';
import { viaTransport } from '../../bench/policy/ClientPolicy.js';
import { buildClients, type Clients } from '../../bench/policy/compose.js';
import { observe } from '../../bench/policy/observe.js';
import type { PolicyPresence, Recorder } from '../../bench/record/Recorder.js';
import { seededRng } from '../../foundation/rng.js';
import type { Transport } from '../../bench/transport/Transport.js';
import type { ClientSpec } from '../spec/sections/client.js';
import type { RunPlan } from '../spec/plan.js';
import { CLIENT_STACK, describePolicies, policyModel, type ClientModel } from '../spec/policies/index.js';
import type { InstanceState } from '../spec/policies/kind.js';

/** The experiment's `client:` section as the plain client model bench/policy builds from. */
export function clientModel(c: ClientSpec): ClientModel {
  return { instances: c.instances, ...policyModel(c) };
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
 * policy stack (order in spec/policies/index.ts), each with its own random stream and
 * its own budget, breaker and throttle state; policy events go to the Recorder.
 */
export function buildClient(
  plan: RunPlan,
  transport: Transport,
  recorder: Recorder,
  clock: Clock,
  newController?: NewController,
): Clients<InstanceState> {
  const model = clientModel(plan.experiment.client);
  return buildClients(model, CLIENT_STACK, viaTransport(transport, clock), {
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

/** The client model in one line, for the report: each policy's clause, then the split. */
export function describeClient(c: ClientSpec): string {
  const parts = describePolicies(c);
  if (c.instances > 1) parts.push(`split over ${c.instances} clients`);
  return parts.join(', ');
}
