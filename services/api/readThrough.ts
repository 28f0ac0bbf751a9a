import { Redis } from 'ioredis';
import type pg from 'pg';
import type { QueryResult } from 'pg';
import type { DurationDist } from '../../foundation/distributions.js';
import type { Rng } from '../../foundation/rng.js';
import { DbPool } from './dbPool.js';
import {
  ReadThrough,
  wallClock,
  type ApiClock,
  type Database,
  type DbRetryPolicy,
  type Lookup,
  type LookupEvents,
} from './lookup.js';
import type { ApiMetrics } from './metrics.js';

export type { Lookup } from './lookup.js';

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
  /** The client-side query timeout and retries (absent: none; Postgres's statement_timeout only). */
  readonly retry?: DbRetryPolicy | undefined;
  /** Redis's requirepass and the Postgres user's password (absent: none, as the local and docker labs run them). */
  readonly redisPassword?: string | undefined;
  readonly dbPassword?: string | undefined;
}

/**
 * The read-through cache of the api: Redis in front of Postgres (a pool of p
 * connections, an indexed lookup plus a declared delay per miss, cancelled by
 * Postgres itself through statement_timeout). The logic is lookup.ts's ReadThrough,
 * shared with the simulated api; this class wires it to ioredis and node-postgres.
 */
export class ReadThroughCache {
  private readonly redis: Redis;
  private readonly pool: DbPool;
  private readonly logic: ReadThrough<pg.Client>;

  constructor(
    cfg: ReadThroughConfig,
    metrics: ApiMetrics,
    rng: Rng,
    private readonly clock: ApiClock = wallClock,
  ) {
    this.redis = new Redis({
      host: cfg.redis.host,
      port: cfg.redis.port,
      lazyConnect: true,
      maxRetriesPerRequest: 1,
      enableOfflineQueue: true,
      ...(cfg.redisPassword !== undefined ? { password: cfg.redisPassword } : {}),
    });
    this.redis.on('error', () => undefined); // counted per command; reconnects on its own
    this.pool = new DbPool(
      {
        host: cfg.postgres.host,
        port: cfg.postgres.port,
        user: cfg.dbUser,
        database: cfg.dbName,
        password: cfg.dbPassword,
        size: cfg.poolSize,
        connectTimeoutMs: cfg.retry?.timeoutMs,
      },
      clock,
    );
    const redis = this.redis;
    const ttlS = cfg.ttlS;
    this.logic = new ReadThrough<pg.Client>(
      clock,
      {
        get: (key) => redis.get(`item:${key}`).then((v) => v !== null),
        fill: (key, value) => redis.set(`item:${key}`, value, 'EX', ttlS),
      },
      pgDatabase(this.pool),
      cfg.queryDelay,
      rng,
      lookupEvents(metrics),
      cfg.retry,
    );
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

  /** Looks `key` up, filling the cache on a miss; `deadlineMs` on the api's clock (Infinity: none). */
  lookup(key: number, deadlineMs: number): Promise<Lookup> {
    return this.logic.lookup(key, deadlineMs);
  }

  /**
   * Queries row `key` in Postgres through the pool (no cache): its value, or how it
   * failed. Neither the pool wait nor the query outlives `withinMs` from now.
   */
  queryDbWithin(key: number, withinMs: number): Promise<{ value: string } | 'timeout' | 'error'> {
    return this.logic.queryDb(key, this.clock.now() + withinMs);
  }

  /** Empties the cache (the flush-cache trigger does this from outside, too). */
  async flush(): Promise<void> {
    await this.redis.flushall();
  }
}

/** Postgres behind `pool`, as the lookup queries it. */
export function pgDatabase(pool: DbPool): Database<pg.Client> {
  return {
    acquire: (deadlineMs) => pool.acquire(deadlineMs),
    release: (c) => pool.release(c),
    discard: (c) => pool.discard(c),
    // One round trip (simple query protocol); key is a validated integer. Postgres
    // cancels the statement when the request's time is up.
    // (pg types a query as one result; a text of two statements resolves to one per statement.)
    query: (c, key, timeoutMs, delayMs) => {
      const res: Promise<StatementResult | StatementResult[]> = c.query<{ value: string }>(
        `SET statement_timeout = ${timeoutMs}; ` +
          `SELECT value, pg_sleep(${(delayMs / 1000).toFixed(6)}) FROM items WHERE id = ${key}`,
      );
      return res.then((r) => (Array.isArray(r) ? r[1]?.rows[0]?.value : undefined) ?? '');
    },
  };
}

/** The lookup's events as the api's Prometheus metrics. */
function lookupEvents(m: ApiMetrics): LookupEvents {
  return {
    cacheHit: () => m.cacheHits.inc(),
    cacheMiss: () => m.cacheMisses.inc(),
    cacheError: () => m.cacheErrors.inc(),
    cacheFillError: () => m.cacheFillErrors.inc(),
    dbPoolWait: (ms) => m.dbPoolWait.observe(ms / 1000),
    dbQuery: (result) => m.dbQueries.inc({ result }),
    dbAttempt: (retry) => m.dbAttempts.inc({ kind: retry ? 'retry' : 'first' }),
    dbQueryTime: (ms) => m.dbQueryTime.observe(ms / 1000),
  };
}

/** A statement's result: the SELECT's rows (the SET's has none). */
type StatementResult = QueryResult<{ value: string }>;
