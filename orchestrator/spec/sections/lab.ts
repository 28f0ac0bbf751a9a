import { z } from 'zod';
import { durationDist, int, positiveDuration } from '../fields.js';

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
  /** Named cost classes a request class can ask for (load.mix[].cost), e.g. heavy: { dist: lognormal, mean: 200ms, sigma: 1 } */
  costs: z
    .record(
      z.string().regex(/^[a-z0-9][a-z0-9_-]{0,39}$/, 'use lower-case letters, digits, "_" and "-"'),
      durationDist,
    )
    .optional(),
  queue: z.enum(['fifo']).default('fifo'),
});

export const lab = z.strictObject({ api });
