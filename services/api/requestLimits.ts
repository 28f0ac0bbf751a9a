import { DEADLINE_HEADER } from '../../foundation/deadlineHeader.js';

/**
 * A request's two time limits on the api's clock, written once for every route (/work's
 * WorkHandler, the LLM routes) and the simulated api: the server-side request timeout
 * (from arrival, queue wait included) and the client's propagated deadline
 * (x-deadline-ms: what it had left when it sent the attempt, counted from arrival).
 */
export interface RequestLimits {
  /** arrival + the request timeout; undefined: the api has none. */
  readonly timeoutAtMs: number | undefined;
  /** arrival + x-deadline-ms; undefined: none sent (or not a number). */
  readonly deadlineMs: number | undefined;
}

/** Which limit ended a request: its own request timeout (504), or the client's deadline (503 deadline). */
export type LimitKind = 'timeout' | 'deadline';

export function requestLimits(
  arrivedMs: number,
  requestTimeoutMs: number | undefined,
  deadlineHeaderMs: number | undefined,
): RequestLimits {
  return {
    timeoutAtMs: requestTimeoutMs === undefined ? undefined : arrivedMs + requestTimeoutMs,
    deadlineMs:
      deadlineHeaderMs !== undefined && Number.isFinite(deadlineHeaderMs)
        ? arrivedMs + deadlineHeaderMs
        : undefined,
  };
}

/** x-deadline-ms as sent (NaN when it is not a number, which no limit honours); undefined when absent. */
export function deadlineHeaderMs(headers: {
  readonly [name: string]: string | string[] | undefined;
}): number | undefined {
  const h = headers[DEADLINE_HEADER];
  return typeof h === 'string' ? Number(h) : undefined;
}

/**
 * The limit that ends a started request first, and when; undefined when it has none.
 * The deadline counts only where the api honours it (deadline dropping, `honourDeadline`).
 * A tie goes to the timeout, as at pickup (WorkerPool checks the timeout first).
 */
export function firstLimit(
  l: RequestLimits,
  honourDeadline: boolean,
): { readonly atMs: number; readonly kind: LimitKind } | undefined {
  const d = honourDeadline ? l.deadlineMs : undefined;
  if (l.timeoutAtMs !== undefined && (d === undefined || l.timeoutAtMs <= d))
    return { atMs: l.timeoutAtMs, kind: 'timeout' };
  return d === undefined ? undefined : { atMs: d, kind: 'deadline' };
}
