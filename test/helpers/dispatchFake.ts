import type { Clock } from '../../foundation/clock.js';
import type { Attempt, AttemptResult, OutcomeKind } from '../../bench/outcome.js';
import type { AttemptHandler, Dispatch, InFlight } from '../../bench/policy/dispatch.js';
import { ScriptedTransport } from './fakeTransport.js';

/**
 * The innermost layer of a dispatch stack in virtual time: each attempt takes
 * `latencyMs(attempt)` and ends with `kindOf(attempt)`; `Infinity` never answers until
 * aborted. An abort answers `timeout` at once, inside `abort` (the re-entrant case every
 * layer above must survive). Counts the attempts sent (with their headers and the time
 * each left) and the aborts in ScriptedTransport's fields: the same script, dispatched.
 */
export class ScriptedDispatch extends ScriptedTransport {
  readonly dispatch: Dispatch = (attempt, handler) => {
    this.sent.push(attempt);
    this.sentAtMs.push(this.clock.now());
    this.headers.push(attempt.headers);
    return new ScriptedAttempt(this, attempt, handler);
  };

  /** What `a` comes to when it runs its course. */
  answer(a: Attempt, sentMs: number): AttemptResult {
    const kind = this.kindOf(a);
    const status =
      this.extras.status?.(a) ??
      (kind === 'ok' ? 200 : kind === 'http-5xx' ? 503 : kind === 'http-4xx' ? 400 : 0);
    const retryAfterMs = this.extras.retryAfterMs?.(a);
    const r: AttemptResult = { kind, status, sentMs, endMs: this.clock.now(), attempt: a.number };
    return retryAfterMs === undefined ? r : { ...r, retryAfterMs };
  }

  timer(atMs: number, fn: () => void): () => void {
    return this.clock.timer(atMs, fn);
  }

  now(): number {
    return this.clock.now();
  }

  latencyOf(a: Attempt): number {
    return this.latencyMs(a);
  }
}

class ScriptedAttempt implements InFlight {
  private done = false;
  private readonly sentMs: number;
  private readonly cancel: () => void;

  constructor(
    private readonly by: ScriptedDispatch,
    private readonly attempt: Attempt,
    private readonly handler: AttemptHandler,
  ) {
    this.sentMs = by.now();
    const lat = by.latencyOf(attempt);
    this.cancel = Number.isFinite(lat) ? by.timer(this.sentMs + lat, () => this.end()) : () => {};
  }

  abort(): void {
    if (this.done) return;
    this.done = true;
    this.cancel();
    this.by.aborted++;
    const nowMs = this.by.now();
    this.handler.onResponse({
      kind: 'timeout',
      status: 0,
      sentMs: this.sentMs,
      endMs: nowMs,
      attempt: this.attempt.number,
    });
  }

  private end(): void {
    if (this.done) return;
    this.done = true;
    this.handler.onResponse(this.by.answer(this.attempt, this.sentMs));
  }
}

/**
 * A layer that never waits: it answers inside `dispatch` with `kindOf(attempt)`, or, when
 * that is undefined, holds the attempt until it is aborted and answers `abortKind` inside
 * `abort`. For the re-entrancy tests: every answer comes back on the caller's stack.
 */
export class ImmediateDispatch {
  sent: Attempt[] = [];
  /** Aborts that reached a held attempt (and made it answer). */
  aborted = 0;
  /** Every abort() called on what this layer returned, settled attempts included. */
  abortCalls = 0;

  constructor(
    private readonly clock: Clock,
    private readonly kindOf: (a: Attempt) => OutcomeKind | undefined,
    private readonly abortKind: OutcomeKind = 'cancelled',
  ) {}

  readonly dispatch: Dispatch = (attempt, handler) => {
    this.sent.push(attempt);
    const kind = this.kindOf(attempt);
    if (kind !== undefined) {
      handler.onResponse(this.result(attempt, kind));
      return { abort: () => void this.abortCalls++ };
    }
    let held = true;
    return {
      abort: () => {
        this.abortCalls++;
        if (!held) return;
        held = false;
        this.aborted++;
        handler.onResponse(this.result(attempt, this.abortKind));
      },
    };
  };

  private result(a: Attempt, kind: OutcomeKind): AttemptResult {
    const nowMs = this.clock.now();
    return { kind, status: kind === 'ok' ? 200 : 0, sentMs: nowMs, endMs: nowMs, attempt: a.number };
  }
}
