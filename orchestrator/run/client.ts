import type { Clock } from '../../bench/clock.js';
import { stack, viaTransport, type SendAttempt } from '../../bench/policy/ClientPolicy.js';
import { observe } from '../../bench/policy/observe.js';
import { retry } from '../../bench/policy/retry.js';
import { attemptTimeout } from '../../bench/policy/timeout.js';
import type { Recorder } from '../../bench/record/Recorder.js';
import { seededRng } from '../../bench/rng.js';
import type { Transport } from '../../bench/transport/Transport.js';
import type { RunPlan } from '../spec/plan.js';

/**
 * The client model of the experiment as a policy stack over the transport:
 *
 *   retry ─► observe (records each attempt) ─► attempt timeout ─► transport
 */
export function buildClient(
  plan: RunPlan,
  transport: Transport,
  recorder: Recorder,
  clock: Clock,
): SendAttempt {
  const c = plan.experiment.client;
  return stack(
    [retry(c.retry), observe(recorder), attemptTimeout(c.timeout)],
    viaTransport(transport, clock),
    { clock, rng: seededRng(plan.seed, 'client') },
  );
}
