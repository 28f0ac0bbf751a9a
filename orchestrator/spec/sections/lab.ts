import { z } from 'zod';
import { int, positiveDuration } from '../fields.js';

/** lab: the system under test. */
const work = z.strictObject({
  dist: z.enum(['constant', 'exponential', 'lognormal']),
  mean: positiveDuration(600_000),
  /** lognormal only: standard deviation in log space */
  sigma: z.number().positive().max(10).optional(),
});

const api = z.strictObject({
  workers: int(1, 10_000),
  work,
  queue: z.enum(['fifo']).default('fifo'),
});

export const lab = z.strictObject({ api });
