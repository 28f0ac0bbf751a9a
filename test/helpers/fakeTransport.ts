import type { Clock } from '../../bench/clock.js';
import type { Attempt, OutcomeKind } from '../../bench/outcome.js';
import type { Transport, TransportResult } from '../../bench/transport/Transport.js';

/**
 * A transport in virtual time: each attempt takes `latencyMs(attempt)` and ends with
 * `kindOf(attempt)`; `Infinity` latency never answers (until aborted). Counts what it saw.
 */
export class ScriptedTransport implements Transport {
  sent: Attempt[] = [];
  aborted = 0;

  constructor(
    private readonly clock: Clock,
    private readonly latencyMs: (a: Attempt) => number,
    private readonly kindOf: (a: Attempt) => OutcomeKind = () => 'ok',
  ) {}

  send(
    attempt: Attempt,
    _h: Record<string, string> | undefined,
    signal: AbortSignal,
  ): Promise<TransportResult> {
    this.sent.push(attempt);
    return new Promise((resolve) => {
      const lat = this.latencyMs(attempt);
      const kind = this.kindOf(attempt);
      const status = kind === 'ok' ? 200 : kind === 'http-5xx' ? 503 : kind === 'http-4xx' ? 400 : 0;
      const cancel = Number.isFinite(lat)
        ? this.clock.timer(this.clock.now() + lat, () => resolve({ kind, status }))
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
