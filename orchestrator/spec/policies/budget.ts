import { z } from 'zod';
import { awsBudget, ratioBudget, type RetryBudget } from '../../../bench/policy/budget.js';
import { fraction } from '../../../foundation/fields.js';
import { clientPolicy } from './kind.js';

const tokens = (max: number) =>
  z
    .number({ error: 'expected a number of tokens' })
    .positive('must be greater than 0')
    .max(max, `must be at most ${max}`);

/** A retry budget per client: a token bucket, SRE style (ratio) or AWS-SDK style. */
const schema = z
  .strictObject({
    style: z.enum(['ratio', 'aws']),
    /** ratio: each origin deposits this many tokens; a retry costs 1 (so retries ≤ ratio of origins). */
    ratio: fraction.optional(),
    /** ratio: the bucket's size, tokens (retries that may go at once). Default 10. */
    burst: tokens(1_000_000).optional(),
    /** aws: the quota, tokens (default 500). */
    capacity: tokens(1_000_000).optional(),
    /** aws: a retry costs this (default 5)... */
    retryCost: tokens(1_000_000).optional(),
    /** aws: ...or this after a timeout (default 10). */
    timeoutCost: tokens(1_000_000).optional(),
    /** aws: a success without retry deposits this (default 1); a successful retry refunds its cost. */
    perSuccess: tokens(1_000_000).optional(),
  })
  .superRefine((b, ctx) => {
    const ratioFields = ['ratio', 'burst'] as const;
    const awsFields = ['capacity', 'retryCost', 'timeoutCost', 'perSuccess'] as const;
    for (const f of b.style === 'ratio' ? awsFields : ratioFields)
      if (b[f] !== undefined)
        ctx.addIssue({ code: 'custom', path: [f], message: `does not apply to style: ${b.style}` });
    if (b.style === 'ratio' && b.ratio === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['ratio'],
        message: 'style: ratio needs a ratio, e.g. ratio: 10%',
      });
    if (b.style === 'ratio' && b.ratio === 0)
      ctx.addIssue({ code: 'custom', path: ['ratio'], message: 'must be greater than 0%' });
  });

export type BudgetModel =
  | { readonly style: 'ratio'; readonly ratio: number; readonly burst: number }
  | {
      readonly style: 'aws';
      readonly capacity: number;
      readonly retryCost: number;
      readonly timeoutCost: number;
      readonly perSuccess: number;
    };

export function budgetOf(m: BudgetModel): RetryBudget {
  return m.style === 'ratio'
    ? ratioBudget(m.ratio, m.burst)
    : awsBudget({
        capacity: m.capacity,
        retryCost: m.retryCost,
        timeoutCost: m.timeoutCost,
        perSuccess: m.perSuccess,
      });
}

/**
 * `budget:` no layer of its own: each client instance's bucket is drawn on by retry and
 * hedging, which sit at their own places in the stack.
 */
export const budget = clientPolicy({
  fields: { budget: schema.optional() },
  example: 'budget: { style: aws, capacity: 100 }',
  model: ({ budget: b }): { readonly budget?: BudgetModel } =>
    b
      ? {
          budget:
            b.style === 'ratio'
              ? { style: 'ratio' as const, ratio: b.ratio ?? 0.1, burst: b.burst ?? 10 }
              : {
                  style: 'aws' as const,
                  capacity: b.capacity ?? 500,
                  retryCost: b.retryCost ?? 5,
                  timeoutCost: b.timeoutCost ?? 10,
                  perSuccess: b.perSuccess ?? 1,
                },
        }
      : {},
  state: (m) => ({ budget: m.budget ? budgetOf(m.budget) : undefined }),
  describe: {
    at: 40,
    text: ({ budget: b }) =>
      b === undefined
        ? undefined
        : b.style === 'ratio'
          ? `retry budget ${(b.ratio ?? 0.1) * 100}% of requests (burst ${b.burst ?? 10})`
          : `retry budget AWS-style (${b.capacity ?? 500} tokens, retry ${b.retryCost ?? 5}, after timeout ${b.timeoutCost ?? 10}, +${b.perSuccess ?? 1} per success)`,
  },
});
