import { z } from 'zod';
import { propagateDeadline as propagate } from '../../../bench/policy/deadline.js';
import { clientPolicy } from './kind.js';

/** `propagateDeadline:` x-deadline-ms on each attempt, computed at the moment of sending. */
export const propagateDeadline = clientPolicy({
  fields: {
    /** Send x-deadline-ms (the origin's remaining deadline) on each attempt, when there is a deadline. */
    propagateDeadline: z.boolean().default(true),
  },
  example: 'propagateDeadline: true',
  /** Send the remaining deadline in x-deadline-ms (only origins with a deadline have one). */
  model: (c): { readonly propagateDeadline: boolean } => ({ propagateDeadline: c.propagateDeadline }),
  layer: { at: 80, build: (m) => (m.propagateDeadline ? propagate() : undefined) },
  describe: {
    at: 90,
    text: (c, client) =>
      client.deadline !== undefined && c.propagateDeadline
        ? 'deadline propagated in x-deadline-ms'
        : undefined,
  },
});
