import { z } from 'zod';
import { durationDist, fraction, int, positiveDuration } from '../../../foundation/fields.js';
import { MAX_REPLICAS } from '../../lab/target.js';
import { API_SERVERS, jvmSection, serverIssues } from './server.js';

/** lab: the system under test. */
const work = z.strictObject({
  dist: z.enum(['constant', 'exponential', 'lognormal']),
  mean: positiveDuration(600_000),
  /** lognormal only: standard deviation in log space */
  sigma: z.number().positive().max(10).optional(),
});

const api = z.strictObject({
  /**
   * The program that plays the api: the bench's own (builtin, the default) or a reference
   * server from Debian's packages (php-fpm behind nginx, gunicorn, jvm), local runtime only.
   * No default is filled in, so a file without it resolves and hashes as before.
   */
  server: z.enum(API_SERVERS).optional(),
  /** server: jvm only: its heap bound, what each request holds, its collector. */
  jvm: jvmSection.optional(),
  /**
   * Identical api instances (processes, simulated servers), each with these workers and
   * queue; the client balances over them (client.balance). Absent: one api. No default
   * is filled in, so a file without it resolves, hashes and records exactly as before.
   */
  replicas: int(1, MAX_REPLICAS).optional(),
  /**
   * The clients reach the api through its link in the fault proxy (link api). Absent: only
   * when a trigger names link api; true: always (a control run on the same path); false:
   * never, and a trigger on link api is refused.
   */
  link: z.boolean().optional(),
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
  /**
   * The expensive error path: extra work (a distribution, like `work`) a worker spends on
   * a request that ends in an error (its request timeout, a dependency failure, a
   * deadline drop), holding the worker before it answers. Nominal capacity stays c / S;
   * the capacity under errors is lower.
   */
  errorCost: durationDist
    .safeExtend({
      /** Also charge a shed at pickup (queue_time, codel); refusals on arrival never cost. */
      onShed: z.boolean().default(false),
    })
    .optional(),
});

/** cache: a read-through Redis in front of the database (needs db). */
const cache = z.strictObject({
  /** How long a filled key lives. */
  ttl: positiveDuration().default(3_600_000),
  /** Fill every key before the run (as the reproducer did), so the cold start is not itself a trigger. */
  prewarm: z.boolean().default(true),
});

/** db: Postgres, seeded with a table of `keys` rows; the api reaches it through a pool of `pool` connections. */
const db = z
  .strictObject({
    keys: int(1, 10_000_000),
    /** Connection pool size p: the database's capacity is p / query time. */
    pool: int(1, 500),
    /** Declared cost of a miss query: an indexed lookup plus this server-side delay (pg_sleep). */
    query: durationDist,
    /**
     * The api's client-side timeout per query attempt: an attempt unanswered by then is
     * abandoned and its connection discarded (replaced in the background). Absent: the api
     * waits for Postgres (whose statement_timeout ends a query at the request's deadline).
     */
    timeout: positiveDuration(600_000).optional(),
    /** The api's retries of a query whose attempt timed out or whose connection broke, each on another connection (needs timeout). */
    retry: z.strictObject({ maxAttempts: int(1, 20) }).optional(),
  })
  .superRefine((d, ctx) => {
    if (d.retry !== undefined && d.timeout === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['retry'],
        message: 'needs lab.db.timeout: a query lost on the link is only noticed by its timeout',
      });
    if (d.timeout !== undefined && d.timeout <= d.query.mean)
      ctx.addIssue({
        code: 'custom',
        path: ['timeout'],
        message: `${d.timeout} ms is not longer than the query's declared ${d.query.mean} ms: most attempts would be abandoned`,
      });
  });

/**
 * llm: the stub LLM provider (services/llm-stub), reached by the api through its own
 * link; it enables the api's /chat, /agent, /retrieve and /ingest routes.
 */
const llm = z
  .strictObject({
    /** A latency profile file (relative to the working directory), or `default`: the shipped one. */
    profile: z.string().min(1).default('default'),
    /** Shares of the provider's answers that fail, each decided per request from the seed. */
    errorRate: fraction.default(0),
    timeoutRate: fraction.default(0),
    rateLimitRate: fraction.default(0),
    cutRate: fraction.default(0),
    contextRate: fraction.default(0),
    /** Requests that may use the provider at once in the api (more wait for a slot). */
    slots: int(1, 100_000).default(64),
    /** The api's per-attempt timeout toward the provider (to the headers of a stream). */
    timeout: positiveDuration(600_000).default(10_000),
    /** The api's own retries toward the provider: exponential backoff with full jitter, Retry-After honoured. */
    retry: z
      .strictObject({
        maxAttempts: int(1, 20).default(3),
        base: positiveDuration(60_000).default(200),
        cap: positiveDuration(600_000).default(2_000),
      })
      .default({ maxAttempts: 3, base: 200, cap: 2_000 }),
  })
  .superRefine((l, ctx) => {
    const sum = l.errorRate + l.timeoutRate + l.rateLimitRate + l.cutRate + l.contextRate;
    if (sum > 1 + 1e-9)
      ctx.addIssue({
        code: 'custom',
        path: ['errorRate'],
        message: `the failure rates add up to ${+(sum * 100).toFixed(4)}%, more than 100%`,
      });
  });

/** How many api replicas the lab runs (lab.api.replicas; absent: 1). */
export function apiReplicaCount(api: { readonly replicas?: number | undefined }): number {
  return api.replicas ?? 1;
}

/**
 * A swarm placement constraint, as `docker service create --constraint` takes it: a node
 * attribute or label, == or !=, a value (node.labels.role == data).
 */
const constraint = z
  .string()
  .regex(
    /^(node\.(id|hostname|role|platform\.os|platform\.arch|labels\.[\w.-]+)|engine\.labels\.[\w.-]+) *(==|!=) *[^\s=!]+$/,
    'a swarm constraint: node.id, node.hostname, node.role, node.platform.os, node.platform.arch, node.labels.NAME or engine.labels.NAME, then == or !=, then a value (node.labels.role == data)',
  );

/**
 * The swarm runtime's placement (DESIGN.md §5 swarm): the constraints each part of the lab
 * is deployed with, so the api replicas, the data services and the generator's machine can
 * be different machines. A role left out goes on the manager. The other runtimes run on one
 * machine and ignore it.
 */
const placement = z.strictObject({
  api: z.array(constraint).min(1).optional(),
  redis: z.array(constraint).min(1).optional(),
  postgres: z.array(constraint).min(1).optional(),
  /** The fault proxy (Toxiproxy), through which the api reaches Redis and Postgres. */
  proxy: z.array(constraint).min(1).optional(),
  /** Prometheus. */
  observers: z.array(constraint).min(1).optional(),
});

export const lab = z
  .strictObject({
    api,
    cache: cache.optional(),
    db: db.optional(),
    llm: llm.optional(),
    placement: placement.optional(),
  })
  .superRefine((l, ctx) => {
    // What a reference server cannot honour (server.ts).
    for (const issue of serverIssues(l.api, l)) ctx.addIssue({ code: 'custom', ...issue });
    if ((l.cache === undefined) !== (l.db === undefined))
      ctx.addIssue({
        code: 'custom',
        path: [l.cache === undefined ? 'cache' : 'db'],
        message: 'a read-through cache needs both lab.cache and lab.db',
      });
  });

/** The lab section as validated. */
export type LabSection = z.output<typeof lab>;
