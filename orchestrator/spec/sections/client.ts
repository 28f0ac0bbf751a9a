import { z } from 'zod';
import { int, positiveDuration } from '../fields.js';

/** client: the client model (timeouts, retries), part of the load model. */
const retryPolicy = z.strictObject({
  policy: z.enum(['none', 'immediate']),
  maxAttempts: int(1, 100).default(1),
});

export const client = z.strictObject({
  /** Per-attempt timeout. */
  timeout: positiveDuration(3_600_000),
  /** Overall deadline of an origin request from its intended time; none when absent. */
  deadline: positiveDuration(3_600_000).optional(),
  retry: retryPolicy.default({ policy: 'none', maxAttempts: 1 }),
  /** Connection cap of the client. Default: derived from the peak rate and the longest attempt, so requests never wait in the client. */
  connections: int(1, 1_000_000).optional(),
});
