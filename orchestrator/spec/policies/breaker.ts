import { z } from 'zod';
import { breaker as breakerLayer, CircuitBreaker, SamplingBreaker } from '../../../bench/policy/breaker.js';
import { fraction, int, positiveDuration } from '../../../foundation/fields.js';
import { formatDuration } from '../../../foundation/units.js';
import { clientPolicy } from './kind.js';

const ms = () => positiveDuration(3_600_000);

/**
 * `breaker:` a circuit breaker per client. Every attempt (first, retry, hedge) meets it;
 * refused ones are not sent.
 */
export const breaker = clientPolicy({
  fields: {
    breaker: z
      .strictObject({
        /** Opens when failures / attempts over the window reach this... */
        failureRatio: fraction.refine((f) => f > 0, 'must be greater than 0%'),
        /** ...over this sliding window... */
        window: ms(),
        /** ...once the window holds at least this many attempts. Default 20. */
        minVolume: int(1, 1_000_000).default(20),
        /** Stays open this long, then half-opens. */
        open: ms(),
        /** Half-open: probes let through at a time; this many successes close it. Default 3. */
        probes: int(1, 1000).default(3),
      })
      .optional(),
  },
  example: 'breaker: { failureRatio: 40%, window: 10s, open: 3s }',
  model: ({
    breaker: b,
  }): {
    readonly breaker?: {
      readonly failureRatio: number;
      readonly windowMs: number;
      readonly minVolume: number;
      readonly openMs: number;
      readonly probes: number;
    };
  } =>
    b
      ? {
          breaker: {
            failureRatio: b.failureRatio,
            windowMs: b.window,
            minVolume: b.minVolume,
            openMs: b.open,
            probes: b.probes,
          },
        }
      : {},
  state: (m, env) => ({
    breaker: m.breaker
      ? new CircuitBreaker(
          new SamplingBreaker({
            failureRatio: m.breaker.failureRatio,
            windowMs: m.breaker.windowMs,
            minVolume: m.breaker.minVolume,
          }),
          { openMs: m.breaker.openMs, probes: m.breaker.probes },
          env.clock,
          (from, to, atMs) => env.emit({ type: 'breaker', client: env.client, from, to, atMs }),
        )
      : undefined,
  }),
  dispose: (s) => s.breaker?.dispose(),
  layer: {
    at: 40,
    build: (_m, { state }) => (state.breaker ? breakerLayer(state.breaker) : undefined),
  },
  describe: {
    at: 50,
    text: ({ breaker: b }) =>
      b &&
      `circuit breaker (opens at ${b.failureRatio * 100}% failures over ${formatDuration(b.window)}, min ${b.minVolume}; open ${formatDuration(b.open)}; ${b.probes} probes)`,
  },
});
