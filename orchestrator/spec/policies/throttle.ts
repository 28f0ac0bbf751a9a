import { z } from 'zod';
import { AdaptiveThrottle, throttle as throttleLayer } from '../../../bench/policy/throttle.js';
import { positiveDuration } from '../../../foundation/fields.js';
import { formatDuration } from '../../../foundation/units.js';
import { clientPolicy } from './kind.js';

/**
 * `throttle:` client-side adaptive throttling (SRE book ch. 21). Below the breaker: it
 * counts only what the breaker let through.
 */
export const throttle = clientPolicy({
  fields: {
    throttle: z
      .strictObject({
        /** The multiplier K (default 2). */
        k: z
          .number({ error: 'expected a number such as 2' })
          .positive('must be greater than 0')
          .max(100)
          .default(2),
        /** The history it counts requests and accepts over (default 2m). */
        window: positiveDuration(3_600_000).default(120_000),
      })
      .optional(),
  },
  example: 'throttle: { k: 1.5 }',
  model: ({ throttle: t }): { readonly throttle?: { readonly k: number; readonly windowMs: number } } =>
    t ? { throttle: { k: t.k, windowMs: t.window } } : {},
  state: (m, env) => ({ throttle: m.throttle ? new AdaptiveThrottle(m.throttle, env.clock) : undefined }),
  layer: {
    at: 50,
    build: (_m, { state }) => (state.throttle ? throttleLayer(state.throttle) : undefined),
  },
  describe: {
    at: 60,
    text: ({ throttle: t }) => t && `adaptive throttling (K ${t.k}, window ${formatDuration(t.window)})`,
  },
});
