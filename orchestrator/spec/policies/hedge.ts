import { z } from 'zod';
import { hedge as hedgeLayer } from '../../../bench/policy/hedge.js';
import { int, positiveDuration } from '../../../foundation/fields.js';
import { formatDuration } from '../../../foundation/units.js';
import { clientPolicy } from './kind.js';

/**
 * `hedge:` a second attempt of the same try after a delay; the loser is cancelled. Below
 * retry (each try is hedged), above the breaker (hedges meet it too).
 */
export const hedge = clientPolicy({
  fields: {
    hedge: z
      .strictObject({
        /** Send a hedge after this long without an answer. */
        delay: positiveDuration(3_600_000),
        /** Hedges per try at most. Default 1. */
        max: int(1, 10).default(1),
      })
      .optional(),
  },
  example: 'hedge: { delay: 80ms }',
  model: ({ hedge: h }): { readonly hedge?: { readonly delayMs: number; readonly maxHedges: number } } =>
    h ? { hedge: { delayMs: h.delay, maxHedges: h.max } } : {},
  layer: {
    at: 30,
    build: (m, { state: { budget } }) =>
      m.hedge
        ? hedgeLayer({
            delayMs: m.hedge.delayMs,
            maxHedges: m.hedge.maxHedges,
            ...(budget ? { budget } : {}),
          })
        : undefined,
  },
  describe: {
    at: 70,
    text: ({ hedge: h }) => h && `hedging after ${formatDuration(h.delay)} (at most ${h.max} per try)`,
  },
});
