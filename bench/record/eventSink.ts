import type { Attempt, AttemptResult, Origin, OutcomeKind } from '../outcome.js';
import { attemptEvent, outcomeEvent } from './eventEncoding.js';

/**
 * Where a run's events go. `attempt` and `outcome` are on the hot path: a columnar sink
 * stores their fields without building a line; `write` takes every other event (policy
 * decisions, trigger actions, swarm tasks) as the object its line is. Nothing may block.
 */
export interface EventSink {
  write(event: object): void;
  close(): Promise<void>;
  /** Without it, an attempt is written as its line (eventEncoding.ts). */
  attempt?(a: Attempt, r: AttemptResult): void;
  /** `kind` is the origin's outcome as recorded (a late success is `deadline-exceeded`). Without it, its line. */
  outcome?(o: Origin, r: AttemptResult, kind: OutcomeKind): void;
}

/** A sink that takes attempts and outcomes as they are (what the Recorder writes to). */
export type RecordingSink = Required<EventSink>;

/** `sink` as a RecordingSink: one of lines only gets attempts and outcomes as their lines. */
export function recordingSink(sink: EventSink): RecordingSink {
  if (sink.attempt && sink.outcome) return sink as RecordingSink;
  return lineSink(
    (e) => sink.write(e),
    () => sink.close(),
  );
}

/** A sink over whole lines (the ndjson file, in-memory consumers): attempts and outcomes become their lines. */
export function lineSink(
  write: (event: object) => void,
  close: () => Promise<void> = async () => {},
): RecordingSink {
  return {
    attempt: (a, r) => write(attemptEvent(a, r)),
    outcome: (o, r, kind) => write(outcomeEvent(o, r, kind)),
    write,
    close,
  };
}

/** A successful attempt or outcome line: what `--events failures` leaves out. */
function isSuccess(event: object): boolean {
  const e = event as { e?: unknown; kind?: unknown };
  return (e.e === 'attempt' || e.e === 'outcome') && e.kind === 'ok';
}

/** The same sink without successful attempts and outcomes (`--events failures`). */
export function failuresOnly(s: EventSink): RecordingSink {
  const sink = recordingSink(s);
  return {
    attempt: (a, r) => (r.kind === 'ok' ? undefined : sink.attempt(a, r)),
    outcome: (o, r, kind) => (kind === 'ok' ? undefined : sink.outcome(o, r, kind)),
    write: (e) => (isSuccess(e) ? undefined : sink.write(e)),
    close: () => sink.close(),
  };
}

/** Both sinks get every event (the event log and an in-memory consumer). */
export function teeSink(x: EventSink, y: EventSink): RecordingSink {
  const a = recordingSink(x);
  const b = recordingSink(y);
  return {
    attempt(t, r) {
      a.attempt(t, r);
      b.attempt(t, r);
    },
    outcome(o, r, kind) {
      a.outcome(o, r, kind);
      b.outcome(o, r, kind);
    },
    write(e) {
      a.write(e);
      b.write(e);
    },
    close: async () => {
      await Promise.all([a.close(), b.close()]);
    },
  };
}

/** Discards events (for tests and benchmarks that only want the buckets). */
export const nullSink: RecordingSink = lineSink(() => {});
