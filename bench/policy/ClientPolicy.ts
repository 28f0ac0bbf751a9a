import type { AbortSignalLike } from '../../foundation/abortSignal.js';
import type { Clock } from '../../foundation/clock.js';
import type { Rng } from '../../foundation/rng.js';
import type { Attempt, AttemptResult } from '../outcome.js';
import type { Transport } from '../transport/Transport.js';
import type { PolicyEvent } from './events.js';
import type { NewController } from '../abort.js';

/**
 * Sends one attempt and settles with its result; never rejects. `signal` is the
 * caller's cancellation (the run ending, a hedge losing, the user abandoning); a
 * policy that gives up on its own (a timeout) aborts only what is below it.
 */
export type SendAttempt = (attempt: Attempt, signal: AbortSignalLike) => Promise<AttemptResult>;

/**
 * What every policy may use. No policy reads the wall clock or Math.random, so the
 * same stack runs in real time over HTTP and in virtual time in the simulator.
 */
export interface PolicyEnv {
  readonly clock: Clock;
  readonly rng: Rng;
  /** Which client instance this stack belongs to (0-based; see bench/policy/compose.ts). */
  readonly client: number;
  /** Where policies report what they decided (the Recorder subscribes). Must not block. */
  readonly emit: (event: PolicyEvent) => void;
  /**
   * Makes the AbortControllers the policies cancel their layers with. Node's own is the
   * default; the simulator passes a lean one (Node's costs microseconds to create, the
   * largest single cost of a simulated origin). See bench/abort.ts.
   */
  readonly newController?: NewController;
}

/** An env for a stack; events are dropped unless `emit` is given. */
export function policyEnv(
  clock: Clock,
  rng: Rng,
  opts: { client?: number; emit?: (event: PolicyEvent) => void } = {},
): PolicyEnv {
  return { clock, rng, client: opts.client ?? 0, emit: opts.emit ?? (() => {}) };
}

/**
 * A client policy wraps the layer below it, undici-interceptor style. Policies that
 * loop over attempts (retry, hedge) sit above those that act on one attempt, so every
 * attempt is seen and timed on its own. The full order is documented with the policy registry (orchestrator/spec/policies/index.ts).
 */
export type ClientPolicy = (next: SendAttempt, env: PolicyEnv) => SendAttempt;

/** Builds a stack: `policies[0]` is outermost, `base` innermost. */
export function stack(policies: readonly ClientPolicy[], base: SendAttempt, env: PolicyEnv): SendAttempt {
  let send = base;
  for (let i = policies.length - 1; i >= 0; i--) send = policies[i]!(send, env);
  return send;
}

/**
 * The innermost layer: a transport, with send and completion times read from the
 * clock. The attempt's own headers (set by policies) are added to `headers`.
 */
export function viaTransport(
  transport: Transport,
  clock: Clock,
  headers?: Record<string, string>,
): SendAttempt {
  return async (attempt, signal) => {
    const h = attempt.headers ? { ...headers, ...attempt.headers } : headers;
    const calledMs = clock.now();
    const r = await transport.send(attempt, h, signal);
    // A wait for a connection inside the client is not service time: sentMs is when it left.
    const wait = r.clientWaitMs ?? 0;
    const out: AttemptResult = {
      kind: r.kind,
      status: r.status,
      sentMs: calledMs + wait,
      endMs: clock.now(),
      attempt: attempt.number,
    };
    // The common answer (no wait, no stream, no Retry-After) is this one object.
    if (wait <= 0 && !r.stream && r.retryAfterMs === undefined) return out;
    const withWait: AttemptResult = {
      ...out,
      ...(wait > 0 ? { clientWaitMs: wait } : {}),
      ...(r.stream ? { stream: r.stream } : {}),
    };
    return r.retryAfterMs === undefined ? withWait : { ...withWait, retryAfterMs: r.retryAfterMs };
  };
}

/**
 * Refuses an attempt before it is sent (nothing reaches the transport): emits the
 * `rejected` event and returns the result, `breaker-open` or `throttled` by who refused.
 */
export function refuse(env: PolicyEnv, attempt: Attempt, by: 'breaker' | 'throttle'): AttemptResult {
  const nowMs = env.clock.now();
  env.emit({
    type: 'rejected',
    client: env.client,
    origin: attempt.origin.id,
    number: attempt.number,
    by,
    atMs: nowMs,
  });
  const kind = by === 'breaker' ? 'breaker-open' : 'throttled';
  return { kind, status: 0, sentMs: nowMs, endMs: nowMs, attempt: attempt.number };
}
