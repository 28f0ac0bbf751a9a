import type { Clock } from '../../foundation/clock.js';
import type { Rng } from '../../foundation/rng.js';
import type { Attempt, AttemptResult, OutcomeKind } from '../outcome.js';
import type { Transport, TransportResult } from '../transport/Transport.js';
import type { PolicyEvent } from './events.js';
import { nodeController, type NewController } from '../abort.js';
import {
  hasAttemptDispatch,
  nativeDispatchOf,
  type AttemptHandler,
  type Dispatch,
  type TransportHandler,
} from './dispatch.js';

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
   * Makes the AbortControllers that cancel promise-form layers (a transport without a
   * native dispatch, a layer adapted with dispatchOf). Node's own is the default; the runs
   * pass a lean one (Node's costs microseconds to create). See bench/abort.ts.
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
 * A client policy wraps the layer below it, undici-interceptor style: given the layer
 * below, it returns its own dispatch (bench/policy/dispatch.ts). Policies that loop over
 * attempts (retry, hedge) sit above those that act on one attempt, so every attempt is
 * seen and timed on its own. The full order is documented with the policy registry
 * (orchestrator/spec/policies/index.ts).
 */
export type ClientPolicy = (next: Dispatch, env: PolicyEnv) => Dispatch;

/** Builds a stack: `policies[0]` is outermost, `base` innermost. */
export function stack(policies: readonly ClientPolicy[], base: Dispatch, env: PolicyEnv): Dispatch {
  let dispatch = base;
  for (let i = policies.length - 1; i >= 0; i--) dispatch = policies[i]!(dispatch, env);
  return dispatch;
}

export interface ViaTransportOptions {
  /** Headers every attempt carries; the attempt's own (set by policies) are added over them. */
  readonly headers?: Record<string, string>;
  /** The controllers of a promise-form transport's attempts (Node's by default). */
  readonly newController?: NewController;
}

/**
 * The innermost layer: a transport, with send and completion times read from the
 * clock. A transport with `dispatchAttempt` (the simulator's) times the attempt itself on
 * that clock and answers with its result; one with a native `dispatch` (the lab's HTTP) is
 * called through it, with no promise per attempt; any other through its promise `send`,
 * with one controller per attempt, which is the attempt's InFlight.
 */
export function viaTransport(transport: Transport, clock: Clock, opts: ViaTransportOptions = {}): Dispatch {
  const headers = opts.headers;
  // A transport that times the attempt itself needs no TransportAttempt between.
  if (hasAttemptDispatch(transport)) {
    const direct = transport;
    return (attempt, handler) => direct.dispatchAttempt(attempt, headersOf(attempt, headers), handler, clock);
  }
  const native = nativeDispatchOf(transport);
  if (native)
    return (attempt, handler) =>
      native(attempt, headersOf(attempt, headers), new TransportAttempt(clock, attempt, handler));
  const newController = opts.newController ?? nodeController;
  return (attempt, handler) => {
    const ctl = newController();
    const t = new TransportAttempt(clock, attempt, handler);
    void transport.send(attempt, headersOf(attempt, headers), ctl.signal).then(t.onResultBound);
    return ctl;
  };
}

function headersOf(
  attempt: Attempt,
  headers: Record<string, string> | undefined,
): Record<string, string> | undefined {
  return attempt.headers ? { ...headers, ...attempt.headers } : headers;
}

/** One attempt at the transport: turns its result into the attempt's, timed by the clock. */
class TransportAttempt implements TransportHandler {
  private readonly calledMs: number;

  constructor(
    private readonly clock: Clock,
    private readonly attempt: Attempt,
    private readonly handler: AttemptHandler,
  ) {
    this.calledMs = clock.now();
  }

  /** For the promise form: `then` needs a function. */
  get onResultBound(): (r: TransportResult) => void {
    return (r) => this.onResult(r);
  }

  onResult(r: TransportResult): void {
    this.handler.onResponse(attemptResult(r, this.calledMs, this.clock.now(), this.attempt.number));
  }
}

/** A transport's result as the attempt's: `calledMs` is when the transport was called. */
function attemptResult(r: TransportResult, calledMs: number, endMs: number, attempt: number): AttemptResult {
  const out = timedAttemptResult(r.kind, r.status, calledMs, r.clientWaitMs ?? 0, endMs, attempt);
  // The common answer (no stream, no Retry-After) is this one object.
  if (!r.stream && r.retryAfterMs === undefined) return out;
  const withStream: AttemptResult = r.stream ? { ...out, stream: r.stream } : out;
  return r.retryAfterMs === undefined ? withStream : { ...withStream, retryAfterMs: r.retryAfterMs };
}

/**
 * An attempt's result from its kind, status and times: `calledMs` is when the transport was
 * called, `clientWaitMs` its wait for a connection inside the client, which is not service
 * time (sentMs is when it left). A transport that times its attempts itself (the
 * simulator's dispatchAttempt) makes its results with this too.
 */
export function timedAttemptResult(
  kind: OutcomeKind,
  status: number,
  calledMs: number,
  clientWaitMs: number,
  endMs: number,
  attempt: number,
): AttemptResult {
  const sentMs = calledMs + clientWaitMs;
  return clientWaitMs > 0
    ? { kind, status, sentMs, endMs, attempt, clientWaitMs }
    : { kind, status, sentMs, endMs, attempt };
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
