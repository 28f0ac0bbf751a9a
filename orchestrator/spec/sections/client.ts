import { z } from 'zod';
import { int } from '../../../foundation/fields.js';
import { policyFields } from '../policies/index.js';

/**
 * client: the client model, part of the load model (timeouts, retries, budget,
 * breaker, throttling, hedging, deadline propagation, abandonment, K clients).
 * Every part but `timeout` is optional; an absent part is a policy the client does
 * not use. Each policy's fields are in its file under policies/, which also says
 * where in the stack it runs.
 */
export const client = z.strictObject({
  ...policyFields(),
  /** The load is split round-robin over this many independent clients (own budget, breaker, throttle). */
  instances: int(1, 100_000).default(1),
  /** Connection cap of the client. Default: derived from the peak rate and the longest attempt, so requests never wait in the client. */
  connections: int(1, 1_000_000).optional(),
});

export type ClientSpec = z.output<typeof client>;
