import type { NewController } from '../../bench/abort.js';
import type { Clock } from '../../foundation/clock.js';
import { viaTransport } from '../../bench/policy/ClientPolicy.js';
import { buildClients, type Clients } from '../../bench/policy/compose.js';
import { observe } from '../../bench/policy/observe.js';
import type { PolicyPresence, Recorder } from '../../bench/record/Recorder.js';
import { seededRng } from '../../foundation/rng.js';
import { replicasOf } from '../../bench/transport/replicas.js';
import type { Transport } from '../../bench/transport/Transport.js';
import type { ClientSpec } from '../spec/sections/client.js';
import type { RunPlan } from '../spec/plan.js';
import type { Experiment } from '../spec/schema.js';
import { apiReplicaCount } from '../spec/sections/lab.js';
import { CLIENT_STACK, describePolicies, policyModel, type ClientModel } from '../spec/policies/index.js';
import type { InstanceState } from '../spec/policies/kind.js';

export { worstOriginMs } from '../spec/originRules.js';

/**
 * How many api replicas the experiment's lab runs (lab.api.replicas, absent: 1): the one
 * place the replica count flows into the client (its balancer, retry.otherReplica) and is
 * checked against the transport. With one, `client.balance` has nothing to do.
 */
export function apiReplicas(e: Experiment): number {
  // Your own system (system:) is one address.
  return e.lab ? apiReplicaCount(e.lab.api) : 1;
}

/**
 * The experiment's `client:` section as the plain client model bench/policy builds from,
 * for a lab of `replicas` api replicas (apiReplicas).
 */
export function clientModel(c: ClientSpec, replicas = 1): ClientModel {
  return { instances: c.instances, replicas, ...policyModel(c) };
}

/**
 * Refuses, before the run, a client that would balance over more replicas than the
 * runtime's transport reaches (a runtime whose lab runs fewer api replicas than declared).
 */
export function checkReplicas(replicas: number, transport: Transport): void {
  const reached = replicasOf(transport);
  if (replicas > reached)
    throw new Error(
      `the client balances over ${replicas} api replicas, but this runtime's transport reaches ${reached}` +
        (reached === 1 ? " (this runtime's lab runs one api)" : ''),
    );
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
  const replicas = apiReplicas(plan.experiment);
  checkReplicas(replicas, transport);
  const model = clientModel(plan.experiment.client, replicas);
  return buildClients(
    model,
    CLIENT_STACK,
    viaTransport(transport, clock, newController ? { newController } : {}),
    {
      clock,
      ...(newController ? { newController } : {}),
      // Client 0 keeps the stream the single client always had.
      rngFor: (k) => seededRng(plan.seed, k === 0 ? 'client' : `client-${k}`),
      emit: (e) => recorder.policy(e),
      observe: observe(recorder, clock),
    },
  );
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
