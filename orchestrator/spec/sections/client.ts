import { z } from 'zod';
import { RETRY_ON } from '../../../bench/policy/retry.js';
import { fraction, int, positiveDuration } from '../../../foundation/fields.js';

/**
 * client: the client model, part of the load model (timeouts, retries, budget,
 * breaker, throttling, hedging, deadline propagation, abandonment, K clients).
 * Every part but `timeout` is optional; an absent part is a policy the client does
 * not use. See bench/policy/compose.ts for the order the policies run in.
 */

const ms = (max = 3_600_000) => positiveDuration(max);

const retry = z
  .strictObject({
    /** none | immediate | fixed (wait `delay`) | exponential (base, cap, jitter) */
    policy: z.enum(['none', 'immediate', 'fixed', 'exponential']),
    /** Tries in all, the first included. */
    maxAttempts: int(1, 100).default(1),
    /** fixed: the wait before each retry. */
    delay: ms().optional(),
    /** exponential: min(cap, base·2^i) before the i-th retry (i from 0), then jitter. */
    base: ms().optional(),
    cap: ms().optional(),
    jitter: z.enum(['none', 'full', 'equal', 'decorrelated']).optional(),
    /** What to retry on; default all of them. A 4xx other than 429 is never retried. */
    retryOn: z
      .preprocess(
        // YAML reads a bare 429 as a number.
        (v) => (Array.isArray(v) ? v.map((x) => (typeof x === 'number' ? String(x) : x)) : v),
        z
          .array(
            z.enum(RETRY_ON, {
              error: 'expected timeout, connection, 5xx or 429 (a 4xx other than 429 is never retried)',
            }),
          )
          .min(1, 'name at least one of timeout, connection, 5xx, 429'),
      )
      .optional(),
  })
  .superRefine((r, ctx) => {
    const only = (field: 'delay' | 'base' | 'cap' | 'jitter', policy: string): void => {
      if (r[field] !== undefined && r.policy !== policy)
        ctx.addIssue({
          code: 'custom',
          path: [field],
          message: `applies only to policy: ${policy} (this retry is ${r.policy})`,
        });
    };
    only('delay', 'fixed');
    only('base', 'exponential');
    only('cap', 'exponential');
    only('jitter', 'exponential');
    if (r.policy === 'fixed' && r.delay === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['delay'],
        message: 'policy: fixed needs a delay, e.g. delay: 200ms',
      });
    if (r.policy === 'exponential') {
      if (r.base === undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['base'],
          message: 'policy: exponential needs a base, e.g. base: 50ms',
        });
      if (r.cap === undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['cap'],
          message: 'policy: exponential needs a cap, e.g. cap: 2s',
        });
      if (r.base !== undefined && r.cap !== undefined && r.cap < r.base)
        ctx.addIssue({ code: 'custom', path: ['cap'], message: `must be at least base (${r.base} ms)` });
    }
  });

const tokens = (max: number) =>
  z
    .number({ error: 'expected a number of tokens' })
    .positive('must be greater than 0')
    .max(max, `must be at most ${max}`);

/** A retry budget per client: a token bucket, SRE style (ratio) or AWS-SDK style. */
const budget = z
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

/** A circuit breaker per client. */
const breaker = z.strictObject({
  /** Opens when failures / attempts over the window reach this... */
  failureRatio: fraction.refine((f) => f > 0, 'must be greater than 0%'),
  /** ...over this sliding window... */
  window: ms(),
  /** ...once the window holds at least this many attempts. Default 20. */
  minVolume: int(1, 1_000_000).default(20),
  /** Stays open this long, then half-opens. */
  open: ms(),
  /** Half-open: probes let through at a time; this many successes close it. Default 3. */
  probes: int(1, 1000).default(3),
});

/** Client-side adaptive throttling (SRE book ch. 21). */
const throttle = z.strictObject({
  /** The multiplier K (default 2). */
  k: z
    .number({ error: 'expected a number such as 2' })
    .positive('must be greater than 0')
    .max(100)
    .default(2),
  /** The history it counts requests and accepts over (default 2m). */
  window: ms().default(120_000),
});

const hedge = z.strictObject({
  /** Send a hedge after this long without an answer. */
  delay: ms(),
  /** Hedges per try at most. Default 1. */
  max: int(1, 10).default(1),
});

const patience = z.strictObject({
  dist: z.enum(['constant', 'exponential', 'lognormal']),
  mean: ms(86_400_000),
  /** lognormal only: standard deviation in log space (default 1) */
  sigma: z.number().positive().max(10).optional(),
});

const abandon = z.strictObject({
  /** The fraction of users who give up when their patience runs out. */
  fraction,
  /** Their patience, from the origin's intended time. */
  patience,
});

export const client = z.strictObject({
  /** Per-attempt timeout. */
  timeout: positiveDuration(3_600_000),
  /** Overall deadline of an origin request from its intended time; none when absent. */
  deadline: positiveDuration(3_600_000).optional(),
  retry: retry.default({ policy: 'none', maxAttempts: 1 }),
  budget: budget.optional(),
  breaker: breaker.optional(),
  throttle: throttle.optional(),
  hedge: hedge.optional(),
  abandon: abandon.optional(),
  /** Send x-deadline-ms (the origin's remaining deadline) on each attempt, when there is a deadline. */
  propagateDeadline: z.boolean().default(true),
  /** The load is split round-robin over this many independent clients (own budget, breaker, throttle). */
  instances: int(1, 100_000).default(1),
  /** Connection cap of the client. Default: derived from the peak rate and the longest attempt, so requests never wait in the client. */
  connections: int(1, 1_000_000).optional(),
});

export type ClientSpec = z.output<typeof client>;
