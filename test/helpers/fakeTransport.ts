import type { Clock } from '../../foundation/clock.js';
import type { Attempt, OutcomeKind } from '../../bench/outcome.js';
import type { Transport, TransportResult } from '../../bench/transport/Transport.js';

export interface ScriptExtras {
  /** The HTTP status of an answer (default: 200 for ok, 503 for 5xx, 400 for 4xx, else 0). */
  readonly status?: (a: Attempt) => number;
  /** A Retry-After the answer carries, ms. */
  readonly retryAfterMs?: (a: Attempt) => number | undefined;
}

/**
 * A transport in virtual time: each attempt takes `latencyMs(attempt)` and ends with
 * `kindOf(attempt)`; `Infinity` latency never answers (until aborted). Counts what it
 * saw: the attempts sent (with the headers and time each was sent at) and the aborts.
 */
export class ScriptedTransport implements Transport {
  sent: Attempt[] = [];
  sentAtMs: number[] = [];
  headers: (Record<string, string> | undefined)[] = [];
  aborted = 0;

  constructor(
    protected readonly clock: Clock,
    protected readonly latencyMs: (a: Attempt) => number,
    protected readonly kindOf: (a: Attempt) => OutcomeKind = () => 'ok',
    protected readonly extras: ScriptExtras = {},
  ) {}

  send(
    attempt: Attempt,
    h: Record<string, string> | undefined,
    signal: AbortSignal,
  ): Promise<TransportResult> {
    this.sent.push(attempt);
    this.sentAtMs.push(this.clock.now());
    this.headers.push(h);
    return new Promise((resolve) => {
      const lat = this.latencyMs(attempt);
      const kind = this.kindOf(attempt);
      const status =
        this.extras.status?.(attempt) ??
        (kind === 'ok' ? 200 : kind === 'http-5xx' ? 503 : kind === 'http-4xx' ? 400 : 0);
      const retryAfterMs = this.extras.retryAfterMs?.(attempt);
      const result: TransportResult =
        retryAfterMs === undefined ? { kind, status } : { kind, status, retryAfterMs };
      const cancel = Number.isFinite(lat)
        ? this.clock.timer(this.clock.now() + lat, () => resolve(result))
        : () => {};
      signal.addEventListener(
        'abort',
        () => {
          cancel();
          this.aborted++;
          resolve({ kind: 'timeout', status: 0 });
        },
        { once: true },
      );
    });
  }

  async close(): Promise<void> {}
}
