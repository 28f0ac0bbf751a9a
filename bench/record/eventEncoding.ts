import type { Attempt, AttemptResult, Origin, OutcomeKind } from '../outcome.js';
import type { PolicyEvent } from '../policy/events.js';

/**
 * events.ndjson's lines, one object per recorded fact (times rounded to the µs: round(x, 3)
 * written out, since these run on the hot path inlined into the Recorder's calls, and a
 * call the JIT's inlining budget leaves out boxes its number argument, an allocation).
 * Each is built only when there is an event log to write it to.
 */

export function attemptEvent(a: Attempt, r: AttemptResult): object {
  return {
    e: 'attempt',
    origin: a.origin.id,
    ...(a.origin.request ? { cls: a.origin.request.cls } : {}),
    n: a.number,
    intendedMs: Math.round(a.origin.intendedMs * 1000) / 1000,
    sentMs: Math.round(r.sentMs * 1000) / 1000,
    endMs: Math.round(r.endMs * 1000) / 1000,
    kind: r.kind,
    status: r.status,
    ...(r.clientWaitMs ? { clientWaitMs: Math.round(r.clientWaitMs * 1000) / 1000 } : {}),
    ...(a.hedge ? { hedge: true } : {}),
    // The api replica that served it, when the client balances; absent (old files, one api): replica 0.
    ...(a.replica !== undefined ? { replica: a.replica } : {}),
    ...(r.stream
      ? {
          tokens: r.stream.tokens,
          ...(r.stream.ttftMs !== undefined ? { ttftMs: Math.round(r.stream.ttftMs * 1000) / 1000 } : {}),
          ...(r.stream.itlMs !== undefined ? { itlMs: Math.round(r.stream.itlMs * 1000) / 1000 } : {}),
        }
      : {}),
  };
}

/** `kind` is the origin's outcome as recorded (a late success is `deadline-exceeded`). */
export function outcomeEvent(o: Origin, r: AttemptResult, kind: OutcomeKind): object {
  return {
    e: 'outcome',
    origin: o.id,
    intendedMs: Math.round(o.intendedMs * 1000) / 1000,
    endMs: Math.round(r.endMs * 1000) / 1000,
    kind,
    attempts: r.attempt,
  };
}

/**
 * A policy's decision that gets a line: a locally refused attempt (so every attempt
 * number is accounted for) or a breaker transition; undefined for the others, which are
 * only counted. `clients` is how many client instances the run has (one: no `client` field).
 */
export function policyEvent(e: PolicyEvent, clients: number): object | undefined {
  switch (e.type) {
    case 'rejected':
      return {
        e: 'rejected',
        origin: e.origin,
        n: e.number,
        by: e.by,
        atMs: Math.round(e.atMs * 1000) / 1000,
        ...(clients > 1 ? { client: e.client } : {}),
      };
    case 'breaker':
      return {
        e: 'breaker',
        client: e.client,
        from: e.from,
        to: e.to,
        atMs: Math.round(e.atMs * 1000) / 1000,
      };
    default:
      return undefined;
  }
}
