import { Redis } from 'ioredis';
import type { QueryResult } from 'pg';
import { sampleDuration, type DurationDist } from '../../foundation/distributions.js';
import type { Rng } from '../../foundation/rng.js';
import { DbPool } from './dbPool.js';
import type { ApiMetrics } from './metrics.js';

export interface HostPort {
  readonly host: string;
  readonly port: number;
}

export interface ReadThroughConfig {
  readonly redis: HostPort;
  readonly postgres: HostPort;
  readonly dbUser: string;
  readonly dbName: string;
  /** Connection pool size p: the database's capacity is p / query time. */
  readonly poolSize: number;
  /** Server-side delay added to each miss query (pg_sleep), on top of the indexed lookup. */
  readonly queryDelay: DurationDist;
  readonly ttlS: number;
}

/** How a lookup ended. */
export type Lookup = 'hit' | 'miss' | 'timeout' | 'error';

const QUERY_CANCELED = '57014';

/**
 * The read-through cache: a hit is served from Redis; a miss queries Postgres through
 * a pool of p connections (an indexed lookup plus a declared delay) and fills Redis
 * with a TTL. A lookup never outlives its request's deadline: the pool wait is
 * abandoned, and the query is cancelled by Postgres itself (statement_timeout set to
 * the time left), so nothing is filled from a query that outlived its request.
 */
export class ReadThroughCache {
  private readonly redis: Redis;
  private readonly pool: DbPool;

  constructor(
    private readonly cfg: ReadThroughConfig,
    private readonly metrics: ApiMetrics,
    private readonly rng: Rng,
  ) {
    this.redis = new Redis({
      host: cfg.redis.host,
      port: cfg.redis.port,
      lazyConnect: true,
      maxRetriesPerRequest: 1,
      enableOfflineQueue: true,
    });
    this.redis.on('error', () => undefined); // counted per command; reconnects on its own
    this.pool = new DbPool({
      host: cfg.postgres.host,
      port: cfg.postgres.port,
      user: cfg.dbUser,
      database: cfg.dbName,
      size: cfg.poolSize,
    });
  }

  get poolWaiting(): number {
    return this.pool.waiting;
  }

  get poolBusy(): number {
    return this.pool.busy;
  }

  async open(): Promise<void> {
    await this.redis.connect();
    await this.pool.open();
  }

  async close(): Promise<void> {
    this.redis.disconnect();
    await this.pool.close();
  }

  /** Looks `key` up, filling the cache on a miss; `deadlineMs` is performance.now() ms (Infinity: none). */
  async lookup(key: number, deadlineMs: number): Promise<Lookup> {
    const m = this.metrics;
    const cacheKey = `item:${key}`;
    let cached: string | null;
    try {
      cached = await withDeadline(this.redis.get(cacheKey), deadlineMs);
    } catch (err) {
      if (err === DEADLINE) return 'timeout';
      m.cacheErrors.inc();
      cached = null; // the cache is down: fall through to the database
    }
    if (cached !== null) {
      m.cacheHits.inc();
      return 'hit';
    }
    m.cacheMisses.inc();
    const got = await this.queryDb(key, deadlineMs);
    if (typeof got === 'string') return got;
    const value = got.value;
    if (performance.now() >= deadlineMs) return 'timeout'; // outlived its request: no fill
    try {
      await withDeadline(this.redis.set(cacheKey, value, 'EX', this.cfg.ttlS), deadlineMs);
    } catch {
      m.cacheFillErrors.inc();
    }
    return 'miss';
  }

  /**
   * Queries row `key` in Postgres through the pool (no cache): its value, or how it
   * failed. Neither the pool wait nor the query outlives `deadlineMs`.
   */
  async queryDb(key: number, deadlineMs: number): Promise<{ value: string } | 'timeout' | 'error'> {
    const m = this.metrics;
    const waitStart = performance.now();
    const client = await this.pool.acquire(deadlineMs);
    m.dbPoolWait.observe((performance.now() - waitStart) / 1000);
    if (!client) return 'timeout';
    const leftMs = Math.floor(deadlineMs - performance.now());
    if (leftMs < 1) {
      this.pool.release(client);
      return 'timeout';
    }
    const delayS = sampleDuration(this.cfg.queryDelay, this.rng) / 1000;
    const t0 = performance.now();
    // One round trip (simple query protocol); key is a validated integer. Postgres
    // cancels the statement when the request's time is up; should Postgres itself not
    // answer (paused), the request stops waiting at its deadline and the connection
    // goes back to the pool only when the query has really ended.
    // (pg types a query as one result; a text of two statements resolves to one per statement.)
    const query: Promise<StatementResult | StatementResult[]> = client.query<{ value: string }>(
      `SET statement_timeout = ${Number.isFinite(leftMs) ? leftMs : 0}; ` +
        `SELECT value, pg_sleep(${delayS.toFixed(6)}) FROM items WHERE id = ${key}`,
    );
    void query
      .catch(() => undefined)
      .finally(() => {
        m.dbQueryTime.observe((performance.now() - t0) / 1000);
        this.pool.release(client);
      });
    try {
      const res = await withDeadline(query, deadlineMs);
      m.dbQueries.inc({ result: 'ok' });
      return { value: (Array.isArray(res) ? res[1]?.rows[0]?.value : undefined) ?? '' };
    } catch (err) {
      const timedOut = err === DEADLINE || (err as { code?: string }).code === QUERY_CANCELED;
      m.dbQueries.inc({ result: timedOut ? 'cancelled' : 'error' });
      return timedOut ? 'timeout' : 'error';
    }
  }

  /** Empties the cache (the flush-cache trigger does this from outside, too). */
  async flush(): Promise<void> {
    await this.redis.flushall();
  }
}

/** A statement's result: the SELECT's rows (the SET's has none). */
type StatementResult = QueryResult<{ value: string }>;

const DEADLINE = Symbol('deadline');

function withDeadline<T>(p: Promise<T>, deadlineMs: number): Promise<T> {
  const leftMs = deadlineMs - performance.now();
  if (!Number.isFinite(leftMs)) return p;
  if (leftMs <= 0) {
    // Too late to wait, but `p` still settles: its rejection (Redis down) must not go unhandled.
    p.catch(() => undefined);
    return Promise.reject(DEADLINE);
  }
  let timer: NodeJS.Timeout;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(DEADLINE), leftMs))),
  ]).finally(() => clearTimeout(timer));
}
