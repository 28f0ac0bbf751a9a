import { positiveDuration } from '../../../foundation/fields.js';
import { formatDuration } from '../../../foundation/units.js';
import { clientPolicy } from './kind.js';

/**
 * `deadline:` the overall deadline of an origin request. It is the origin's, not a
 * layer's: the run plan gives it to every origin (RunPlan.deadlineMs), and retry,
 * hedging and the attempt timeout respect it.
 */
export const deadline = clientPolicy({
  fields: {
    /** Overall deadline of an origin request from its intended time; none when absent. */
    deadline: positiveDuration(3_600_000).optional(),
  },
  example: 'deadline: 3s',
  model: (): object => ({}),
  describe: {
    at: 30,
    text: (c) => `deadline ${c.deadline !== undefined ? formatDuration(c.deadline) : 'none'}`,
  },
});
