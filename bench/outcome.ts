import type { StreamTiming } from './transport/sse.js';
import type { RequestShape } from './workload/mix.js';

/**
 * The vocabulary of what happened to an attempt or an origin request (DESIGN.md §2).
 * Failures are counted by kind, never folded into latency.
 */
export const FAILURE_KINDS = [
  'timeout', // the attempt's own timeout fired
  'conn-refused',
  'conn-reset',
  'conn-error', // any other transport error
  'http-4xx',
  'http-5xx',
  'shed', // the service refused it on purpose (503 marked as shed)
  'deadline-exceeded', // answered, but after the origin's deadline
  'abandoned-at-end', // still in flight when the run ended
  'unsent', // the generator fell so far behind its schedule that it never sent it
  // Client-side outcomes (bench/policy/): the client itself decided.
  'abandoned', // the user's patience ran out first (abandonment policy)
  'breaker-open', // refused locally: the client's circuit breaker was open (or half-open and busy)
  'throttled', // refused locally by client-side adaptive throttling
  'cancelled', // an attempt the client cancelled (a hedge's loser, an abandoned origin); attempts only
] as const;

export type FailureKind = (typeof FAILURE_KINDS)[number];
export type OutcomeKind = 'ok' | FailureKind;

/** One origin request: a request a user wants served, created at its intended time. */
export interface Origin {
  readonly id: number;
  /** What it asks for (class, method, path, body); the transport's default request when absent. */
  readonly request?: RequestShape;
  /** Intended send time, ms since run start (the arrival process's schedule). */
  readonly intendedMs: number;
  /** Absolute client deadline, ms since run start; Infinity when none is declared. */
  readonly deadlineMs: number;
}

/** One transport-level try of an origin request. `number` starts at 1. */
export interface Attempt {
  readonly origin: Origin;
  readonly number: number;
  /** A hedge: sent while an earlier attempt of the same origin was still in flight. */
  readonly hedge?: boolean;
  /** Headers the policies add to this attempt (e.g. the propagated deadline). */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * The api replica it goes to, 0-based: an index into the endpoints the transport was
   * built with, set by the balancer (bench/policy/balance.ts). Absent: replica 0.
   */
  readonly replica?: number;
  /** A replica the balancer should not pick for it: where the try it retries failed (`retry.otherReplica`). */
  readonly avoidReplica?: number;
}

/** What one attempt (or, at the top of a policy stack, the whole origin) came to. */
export interface AttemptResult {
  readonly kind: OutcomeKind;
  /** HTTP status, 0 when no response arrived. */
  readonly status: number;
  /** When this attempt was actually sent, ms since run start. */
  readonly sentMs: number;
  /** When it completed (response, error or timeout), ms since run start. */
  readonly endMs: number;
  /** The attempt number that produced this result. */
  readonly attempt: number;
  /**
   * The highest attempt number used so far for this origin, when above `attempt`
   * (a hedge was sent, or a later attempt was refused locally). Absent: `attempt`.
   */
  readonly lastNumber?: number;
  /** The server asked the client to wait this long before trying again (Retry-After). */
  readonly retryAfterMs?: number;
  /** Time this attempt waited inside the client for a connection (0 when it did not). */
  readonly clientWaitMs?: number;
  /** A streamed answer's client-side timing (bench/transport/sse.ts), when the answer was a stream. */
  readonly stream?: StreamTiming;
  /** The replica that served this attempt, when the client balances over replicas. Absent: replica 0. */
  readonly replica?: number;
}

/** The highest attempt number a result accounts for. */
export function lastNumberOf(r: AttemptResult): number {
  return r.lastNumber ?? r.attempt;
}

export function kindOfStatus(status: number): OutcomeKind {
  if (status >= 200 && status < 400) return 'ok';
  if (status >= 500) return 'http-5xx';
  return 'http-4xx';
}
