import { attemptTimeout } from '../../../bench/policy/timeout.js';
import { positiveDuration } from '../../../foundation/fields.js';
import { formatDuration } from '../../../foundation/units.js';
import { clientPolicy } from './kind.js';

/** `timeout:` each attempt's own timeout, cut short by the origin's deadline. */
export const timeout = clientPolicy({
  fields: {
    /** Per-attempt timeout. */
    timeout: positiveDuration(3_600_000),
  },
  example: 'timeout: 500ms',
  model: (c): { readonly timeoutMs: number } => ({ timeoutMs: c.timeout }),
  layer: { at: 70, build: (m) => attemptTimeout(m.timeoutMs) },
  describe: { at: 10, text: (c) => `per-attempt timeout ${formatDuration(c.timeout)}` },
});
