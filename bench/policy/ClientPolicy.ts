import type { Clock } from '../clock.js';
import type { Rng } from '../rng.js';
import type { Attempt, AttemptResult } from '../outcome.js';
import type { Transport } from '../transport/Transport.js';

/**
 * Sends one attempt and settles with its result; never rejects. `signal` is the
 * caller's cancellation (the run ending, a hedge losing); a policy that gives up on
 * its own (a timeout) aborts only what is below it.
 */
export type SendAttempt = (attempt: Attempt, signal: AbortSignal) => Promise<AttemptResult>;

/** What every policy may use. No policy reads the wall clock or Math.random. */
export interface PolicyEnv {
  readonly clock: Clock;
  readonly rng: Rng;
}

/**
 * A client policy wraps the layer below it, undici-interceptor style. Policies that
 * loop over attempts (retry) sit above those that act on one attempt (the recorder's
 * observer, the attempt timeout), so every attempt is seen and timed on its own:
 *
 *   retry ─► observe (records each attempt) ─► attempt timeout ─► transport
 */
export type ClientPolicy = (next: SendAttempt, env: PolicyEnv) => SendAttempt;

/** Builds a stack: `policies[0]` is outermost, `base` innermost. */
export function stack(policies: readonly ClientPolicy[], base: SendAttempt, env: PolicyEnv): SendAttempt {
  let send = base;
  for (let i = policies.length - 1; i >= 0; i--) send = policies[i]!(send, env);
  return send;
}

/** The innermost layer: a transport, with send and completion times read from the clock. */
export function viaTransport(
  transport: Transport,
  clock: Clock,
  headers?: Record<string, string>,
): SendAttempt {
  return async (attempt, signal) => {
    const calledMs = clock.now();
    const r = await transport.send(attempt, headers, signal);
    // A wait for a connection inside the client is not service time: sentMs is when it left.
    const wait = r.clientWaitMs ?? 0;
    return wait > 0
      ? {
          kind: r.kind,
          status: r.status,
          sentMs: calledMs + wait,
          endMs: clock.now(),
          attempt: attempt.number,
          clientWaitMs: wait,
        }
      : { kind: r.kind, status: r.status, sentMs: calledMs, endMs: clock.now(), attempt: attempt.number };
  };
}
