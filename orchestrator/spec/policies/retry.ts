import { z } from 'zod';
import { exponential, fixed, immediate, type Backoff, type Jitter } from '../../../bench/policy/backoff.js';
import { retry as retryLayer, RETRY_ON, type RetryOn } from '../../../bench/policy/retry.js';
import { int, positiveDuration } from '../../../foundation/fields.js';
import { formatDuration } from '../../../foundation/units.js';
import { clientPolicy } from './kind.js';

const ms = () => positiveDuration(3_600_000);

const schema = z
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
    /** Send a retry to another api replica than the try that failed (with more than one replica). */
    otherReplica: z.boolean().optional(),
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
    if (r.otherReplica && r.policy === 'none')
      ctx.addIssue({
        code: 'custom',
        path: ['otherReplica'],
        message: 'retry.policy is none: there is no retry to send to another replica',
      });
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

export type BackoffModel =
  | { readonly kind: 'immediate' }
  | { readonly kind: 'fixed'; readonly delayMs: number }
  | {
      readonly kind: 'exponential';
      readonly baseMs: number;
      readonly capMs: number;
      readonly jitter: Jitter;
    };

export interface RetryModel {
  /** Tries in all: 1 when the client does not retry. */
  readonly maxAttempts: number;
  readonly backoff: BackoffModel;
  readonly retryOn: readonly RetryOn[];
  /** Each retry goes to another replica than the try that failed; absent when not asked for. */
  readonly otherReplica?: true;
}

export function backoffOf(m: BackoffModel): Backoff {
  switch (m.kind) {
    case 'immediate':
      return immediate();
    case 'fixed':
      return fixed(m.delayMs);
    case 'exponential':
      return exponential({ baseMs: m.baseMs, capMs: m.capMs, jitter: m.jitter });
  }
}

/** `retry:` none, immediate, fixed or exponential backoff with jitter; backoff, budget and the deadline decide each retry. */
export const retry = clientPolicy({
  fields: { retry: schema.default({ policy: 'none', maxAttempts: 1 }) },
  example:
    'retry: { policy: exponential, maxAttempts: 3, base: 50ms, cap: 1s, retryOn: [timeout, 429], otherReplica: true }',
  model: ({ retry: r }): { readonly retry: RetryModel } => {
    const backoff: BackoffModel =
      r.policy === 'fixed'
        ? { kind: 'fixed', delayMs: r.delay ?? 0 }
        : r.policy === 'exponential'
          ? { kind: 'exponential', baseMs: r.base ?? 0, capMs: r.cap ?? 0, jitter: r.jitter ?? 'full' }
          : { kind: 'immediate' };
    return {
      retry: {
        maxAttempts: r.policy === 'none' ? 1 : r.maxAttempts,
        backoff,
        retryOn: r.retryOn ?? RETRY_ON,
        ...(r.otherReplica && r.policy !== 'none' ? { otherReplica: true as const } : {}),
      },
    };
  },
  layer: {
    at: 20,
    // With a budget the retry layer stays even for a single try: it tells the budget about
    // each request and success, which is what refills it for hedges.
    build: (m, { state: { budget } }) =>
      m.retry.maxAttempts > 1 || budget
        ? retryLayer({
            maxAttempts: m.retry.maxAttempts,
            backoff: backoffOf(m.retry.backoff),
            retryOn: m.retry.retryOn,
            ...(budget ? { budget } : {}),
            ...(m.retry.otherReplica && m.replicas > 1 ? { otherReplica: true } : {}),
          })
        : undefined,
  },
  describe: {
    at: 20,
    text: ({ retry: r }) => {
      let text = `retry ${r.policy}`;
      if (r.policy !== 'none') text += ` up to ${r.maxAttempts} attempts`;
      if (r.policy === 'fixed' && r.delay !== undefined) text += `, ${formatDuration(r.delay)} apart`;
      if (r.policy === 'exponential' && r.base !== undefined && r.cap !== undefined)
        text += ` (base ${formatDuration(r.base)}, cap ${formatDuration(r.cap)}, ${r.jitter ?? 'full'} jitter)`;
      if (r.retryOn) text += ` on ${r.retryOn.join(', ')}`;
      if (r.otherReplica) text += `, each to another replica`;
      return text;
    },
  },
});
