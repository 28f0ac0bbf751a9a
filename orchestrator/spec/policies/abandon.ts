import { z } from 'zod';
import type { DurationDist } from '../../../foundation/distributions.js';
import { abandon as abandonLayer } from '../../../bench/policy/abandon.js';
import { fraction, positiveDuration } from '../../../foundation/fields.js';
import { formatDuration } from '../../../foundation/units.js';
import { clientPolicy, type PolicyFields } from './kind.js';

const patience = z.strictObject({
  dist: z.enum(['constant', 'exponential', 'lognormal']),
  mean: positiveDuration(86_400_000),
  /** lognormal only: standard deviation in log space (default 1) */
  sigma: z.number().positive().max(10).optional(),
});

const fields = {
  abandon: z
    .strictObject({
      /** The fraction of users who give up when their patience runs out. */
      fraction,
      /** Their patience, from the origin's intended time. */
      patience,
    })
    .optional(),
};

function patienceOf(p: NonNullable<PolicyFields<typeof fields>['abandon']>['patience']): DurationDist {
  return p.dist === 'lognormal'
    ? { dist: 'lognormal', meanMs: p.mean, sigma: p.sigma ?? 1 }
    : { dist: p.dist, meanMs: p.mean };
}

/** `abandon:` users who give up; outermost, since the user's patience covers everything below. */
export const abandon = clientPolicy({
  fields,
  example: 'abandon: { fraction: 25%, patience: { dist: exponential, mean: 2s } }',
  model: ({
    abandon: a,
  }): { readonly abandon?: { readonly fraction: number; readonly patience: DurationDist } } =>
    a ? { abandon: { fraction: a.fraction, patience: patienceOf(a.patience) } } : {},
  layer: {
    at: 10,
    build: (m) => (m.abandon && m.abandon.fraction > 0 ? abandonLayer(m.abandon) : undefined),
  },
  describe: {
    at: 80,
    text: ({ abandon: a }) =>
      a &&
      `${a.fraction * 100}% of users abandon after a ${a.patience.dist} patience (mean ${formatDuration(a.patience.mean)})`,
  },
});
