import type { AbortSignalLike } from '../../foundation/abortSignal.js';
import type { Clock } from '../../foundation/clock.js';
import type { Attempt, AttemptResult } from '../outcome.js';
import type { Transport, TransportHandler } from '../transport/Transport.js';
import { nodeController, type NewController } from '../abort.js';

/**
 * The client's seam, undici's dispatcher shape: `dispatch(attempt, handler)` starts one
 * attempt and returns its `InFlight`; the layer below calls `handler.onResponse` exactly
 * once with what the attempt came to. No promise and no AbortController per attempt: each
 * policy is a small synchronous state machine (one object per attempt and layer), its
 * timers on the injected clock, so the same code runs over the lab's sockets and over the
 * simulator's virtual network, and a simulated origin costs well under a microsecond of
 * policy work.
 *
 * There is no separate `onError`: every failure is a kind of result (bench/outcome.ts),
 * counted by kind, never thrown; a transport that throws has a bug, and the exception
 * propagates to whoever called dispatch.
 */
export interface AttemptHandler {
  /** The attempt's result, exactly once; possibly synchronously inside `dispatch` or `abort`. */
  onResponse(result: AttemptResult): void;
}

/**
 * An attempt below a layer. `abort()` is the caller's cancellation (a timeout, a hedge's
 * loser, the user giving up, the run ending): the layer below stops promptly and still
 * calls `onResponse` exactly once (at once or soon), with the kind it saw; the caller
 * decides what a cancelled attempt counts as. Aborting a settled attempt does nothing.
 */
export interface InFlight {
  abort(): void;
}

/** Sends one attempt through the layers below. */
export type Dispatch = (attempt: Attempt, handler: AttemptHandler) => InFlight;

/** What a settled attempt returns from dispatch: nothing left to abort. */
export const SETTLED: InFlight = { abort() {} };

export type { TransportHandler };

/**
 * A transport that dispatches natively (the simulator's): no promise per attempt.
 * `headers` are the attempt's headers merged over the transport's defaults.
 */
export interface DispatchTransport {
  dispatch(
    attempt: Attempt,
    headers: Record<string, string> | undefined,
    handler: TransportHandler,
  ): InFlight;
}

/**
 * A transport that can answer an attempt with the attempt's own result (the simulator's):
 * what viaTransport would make of its TransportResult, timed by `clock` (sentMs when it
 * was called plus its wait for a connection, endMs when it ended), with no adapter and no
 * TransportResult per attempt.
 */
export interface AttemptDispatchTransport {
  dispatchAttempt(
    attempt: Attempt,
    headers: Record<string, string> | undefined,
    handler: AttemptHandler,
    clock: Clock,
  ): InFlight;
}

/** The promise form of a dispatch (tests, and callers that await one origin). */
export type SendAttempt = (attempt: Attempt, signal: AbortSignalLike) => Promise<AttemptResult>;

/** Awaits one dispatch: the promise settles with the result; `signal` aborts the attempt. */
export function sendOf(dispatch: Dispatch): SendAttempt {
  return (attempt, signal) =>
    new Promise<AttemptResult>((resolve) => {
      let settled = false;
      const onAbort = (): void => inFlight.abort();
      const inFlight = dispatch(attempt, {
        onResponse(r) {
          settled = true;
          signal.removeEventListener('abort', onAbort);
          resolve(r);
        },
      });
      if (settled) return;
      if (signal.aborted) inFlight.abort();
      else signal.addEventListener('abort', onAbort, { once: true });
    });
}

/** A promise-form layer as a dispatch (a test's scripted layer): one controller per attempt. */
export function dispatchOf(send: SendAttempt, newController: NewController = nodeController): Dispatch {
  return (attempt, handler) => {
    const ctl = newController();
    void send(attempt, ctl.signal).then((r) => handler.onResponse(r));
    return { abort: () => ctl.abort() };
  };
}

/** Whether the transport has a dispatchAttempt (called as its method: no bound function between). */
export function hasAttemptDispatch(t: Transport): t is Transport & AttemptDispatchTransport {
  return typeof (t as Partial<AttemptDispatchTransport>).dispatchAttempt === 'function';
}

/** The transport's native dispatch, or undefined for a transport that only sends promises. */
export function nativeDispatchOf(t: Transport): DispatchTransport['dispatch'] | undefined {
  return t.dispatch?.bind(t);
}
