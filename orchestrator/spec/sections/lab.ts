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
  /** Queue discipline: fifo (the default) serves the oldest first, lifo the newest. */
  queue: z.enum(['fifo', 'lifo']).default('fifo'),
  /** Bounded queue: at most this many waiting; more are refused at once (503 queue_full). */
  queueLimit: int(0, 1_000_000).optional(),
  /** At most this many requests admitted, waiting or running; more are refused (503 concurrency). */
  concurrencyLimit: int(1, 1_000_000).optional(),
  /** Load shedding by queueing delay, judged when a worker picks a request up. */
  shed: z
    .discriminatedUnion('policy', [
      /** a fixed limit: refuse requests that waited longer (503 queue_time) */
      z.strictObject({ policy: z.literal('queue-time'), limit: positiveDuration(600_000) }),
      /** CoDel-style: the limit drops from `interval` to `target` while the minimum delay over an interval stays above target (503 codel) */
      z.strictObject({
        policy: z.literal('codel'),
        target: positiveDuration(600_000),
        interval: positiveDuration(600_000),
      }),
    ])
    .optional()
    .superRefine((s, ctx) => {
      if (s?.policy === 'codel' && s.interval <= s.target)
        ctx.addIssue({ code: 'custom', path: ['interval'], message: 'must be longer than target' });
    }),
  /** Honour the propagated deadline (x-deadline-ms): drop at pickup, without the work, what expired (503 deadline). */
  deadlineDrop: z.boolean().default(false),
  /**
   * Server-side request timeout, from arrival (queue wait included): the request is
   * abandoned with 504 together with its database query, so nothing is filled from a
   * query that outlived it (PHP's max_execution_time in the OSDI '22 cache reproducer).
   */
  requestTimeout: positiveDuration(600_000).optional(),
});

/** cache: a read-through Redis in front of the database (needs db). */
const cache = z.strictObject({
  /** How long a filled key lives. */
  ttl: positiveDuration().default(3_600_000),
  /** Fill every key before the run (as the reproducer did), so the cold start is not itself a trigger. */
  prewarm: z.boolean().default(true),
});

/** db: Postgres, seeded with a table of `keys` rows; the api reaches it through a pool of `pool` connections. */
const db = z.strictObject({
  keys: int(1, 10_000_000),
  /** Connection pool size p: the database's capacity is p / query time. */
  pool: int(1, 500),
  /** Declared cost of a miss query: an indexed lookup plus this server-side delay (pg_sleep). */
  query: durationDist,
});

export const lab = z
  .strictObject({ api, cache: cache.optional(), db: db.optional() })
  .superRefine((l, ctx) => {
    if ((l.cache === undefined) !== (l.db === undefined))
      ctx.addIssue({
        code: 'custom',
        path: [l.cache === undefined ? 'cache' : 'db'],
        message: 'a read-through cache needs both lab.cache and lab.db',
      });
  });
