import { sampleDuration, type DurationDist } from '../../foundation/distributions.js';
import type { Clock } from '../../foundation/clock.js';
import type { Rng } from '../../foundation/rng.js';

/**
 * The read-through lookup, written once for the api (ioredis, node-postgres, wall
 * time) and the simulated api (sim/data.ts's clients, virtual time): both hand it their
 * clock, their cache and database clients, and where its events are counted.
 */

/** The time the api's request path runs on: `now` and timers (ms). */
export type ApiClock = Pick<Clock, 'now' | 'timer'>;

/**
 * The api process's clock: performance.now() and Node's timers, as the api has always
 * timed its work (whole-millisecond timers are enough for a service).
 */
export const wallClock: ApiClock = {
  now: () => performance.now(),
  timer: (atMs, fn) => {
    const t = setTimeout(fn, Math.max(0, atMs - performance.now()));
    return () => clearTimeout(t);
  },
};

/** How a lookup ended. */
export type Lookup = 'hit' | 'miss' | 'timeout' | 'error';

/** What a miss query did. */
export type QueryResult = 'ok' | 'cancelled' | 'error';

/** The cache (Redis) as the lookup uses it. A rejected promise: the cache is unreachable. */
export interface CacheClient {
  /** Whether `key` is cached. */
  get(key: number): Promise<boolean>;
  /** Fills `key` with `value` (with the cache's TTL). */
  fill(key: number, value: string): Promise<unknown>;
}

/** The database (Postgres) behind a pool of connections `C`. */
export interface Database<C> {
  /** A connection, or undefined when `deadlineMs` passes first. */
  acquire(deadlineMs: number): Promise<C | undefined>;
  release(c: C): void;
  /**
   * Queries row `key` on `c`, cancelled by the database after `timeoutMs` (0: never),
   * the query itself taking `delayMs` beyond its lookup. Resolves the row's value;
   * rejects on a cancel (an error with code QUERY_CANCELED) or a broken connection.
   */
  query(c: C, key: number, timeoutMs: number, delayMs: number): Promise<string>;
  /**
   * Breaks `c` under a query the client gave up on: the query rejects, and `c`, once
   * released, is replaced in the background (a late reply must never answer the next query).
   */
  discard(c: C): void;
}

/**
 * The api's client-side policy toward the database (lab.db.timeout, lab.db.retry): an
 * attempt unanswered after `timeoutMs` is abandoned and its connection discarded, and the
 * query is sent again on another connection, `maxAttempts` attempts in all.
 */
export interface DbRetryPolicy {
  readonly timeoutMs: number;
  readonly maxAttempts: number;
}

/** Where the lookup's events are counted (prom-client in the api, plain numbers in the simulator). */
export interface LookupEvents {
  cacheHit(): void;
  cacheMiss(): void;
  cacheError(): void;
  cacheFillError(): void;
  dbPoolWait(ms: number): void;
  /** A query's outcome, once per query that sent at least one attempt. */
  dbQuery(result: QueryResult): void;
  /** One attempt sent (one per query without a retry policy): attempts / queries is the amplification toward the database. */
  dbAttempt(retry: boolean): void;
  dbQueryTime(ms: number): void;
}

/** Postgres's SQLSTATE for a statement cancelled by statement_timeout. */
export const QUERY_CANCELED = '57014';

const DEADLINE = Symbol('deadline');

/**
 * The read-through cache's logic: a hit is served from the cache; a miss queries the
 * database through its pool (a declared delay on top of the lookup) and fills the
 * cache. A lookup never outlives its request's deadline: the pool wait is abandoned,
 * and the query is cancelled by the database itself (its timeout set to the time
 * left), so nothing is filled from a query that outlived its request.
 */
export class ReadThrough<C> {
  constructor(
    private readonly clock: ApiClock,
    private readonly cache: CacheClient,
    private readonly db: Database<C>,
    private readonly queryDelay: DurationDist,
    private readonly rng: Rng,
    private readonly events: LookupEvents,
    private readonly retry?: DbRetryPolicy,
  ) {}

  /** Looks `key` up, filling the cache on a miss; `deadlineMs` on the clock (Infinity: none). */
  async lookup(key: number, deadlineMs: number): Promise<Lookup> {
    const m = this.events;
    let cached: boolean;
    try {
      cached = await this.withDeadline(this.cache.get(key), deadlineMs);
    } catch (err) {
      if (err === DEADLINE) return 'timeout';
      m.cacheError();
      cached = false; // the cache is down: fall through to the database
    }
    if (cached) {
      m.cacheHit();
      return 'hit';
    }
    m.cacheMiss();
    const got = await this.queryDb(key, deadlineMs);
    if (typeof got === 'string') return got;
    if (this.clock.now() >= deadlineMs) return 'timeout'; // outlived its request: no fill
    try {
      await this.withDeadline(this.cache.fill(key, got.value), deadlineMs);
    } catch {
      m.cacheFillError();
    }
    return 'miss';
  }

  /**
   * Queries row `key` in the database through the pool (no cache): its value, or how
   * it failed. Neither the pool wait nor the query outlives `deadlineMs`. With a retry
   * policy, an attempt abandoned by its own timeout, or whose connection broke, is sent
   * again on another connection while attempts and time are left.
   */
  async queryDb(key: number, deadlineMs: number): Promise<{ value: string } | 'timeout' | 'error'> {
    const m = this.events;
    const maxAttempts = this.retry?.maxAttempts ?? 1;
    let sent = false;
    const ended = (r: 'timeout' | 'error'): 'timeout' | 'error' => {
      if (sent) m.dbQuery(r === 'timeout' ? 'cancelled' : 'error');
      return r;
    };
    for (let attempt = 1; ; attempt++) {
      const waitStart = this.clock.now();
      const client = await this.db.acquire(deadlineMs);
      m.dbPoolWait(this.clock.now() - waitStart);
      if (!client) return ended('timeout');
      const leftMs = Math.floor(deadlineMs - this.clock.now());
      if (leftMs < 1) {
        this.db.release(client);
        return ended('timeout');
      }
      const delayMs = sampleDuration(this.queryDelay, this.rng);
      const t0 = this.clock.now();
      sent = true;
      m.dbAttempt(attempt > 1);
      // Should the database itself not answer (paused), the request stops waiting at its
      // deadline and the connection goes back to the pool only when the query has really ended.
      const query = this.db.query(client, key, Number.isFinite(leftMs) ? leftMs : 0, delayMs);
      void query
        .catch(() => undefined)
        .finally(() => {
          m.dbQueryTime(this.clock.now() - t0);
          this.db.release(client);
        });
      const attemptDeadline = this.retry ? Math.min(deadlineMs, t0 + this.retry.timeoutMs) : deadlineMs;
      try {
        const value = await this.withDeadline(query, attemptDeadline);
        m.dbQuery('ok');
        return { value };
      } catch (err) {
        const more = attempt < maxAttempts && this.clock.now() < deadlineMs;
        if (err === DEADLINE) {
          // Given up on by the client: with a policy its connection goes (a reply lost on the
          // link would hold it for ever; a late one would answer the next query).
          if (this.retry) this.db.discard(client);
          if (more && this.retry) continue;
          return ended('timeout');
        }
        if ((err as { code?: string }).code === QUERY_CANCELED) return ended('timeout');
        if (more) continue; // a broken connection: the next attempt takes another
        return ended('error');
      }
    }
  }

  /** `p`, or a rejection with DEADLINE when `deadlineMs` passes first. */
  private withDeadline<T>(p: Promise<T>, deadlineMs: number): Promise<T> {
    const leftMs = deadlineMs - this.clock.now();
    if (!Number.isFinite(leftMs)) return p;
    if (leftMs <= 0) {
      // Too late to wait, but `p` still settles: its rejection (cache down) must not go unhandled.
      p.catch(() => undefined);
      return Promise.reject(DEADLINE);
    }
    return new Promise<T>((resolve, reject) => {
      let done = false;
      const cancel = this.clock.timer(deadlineMs, () => {
        if (done) return;
        done = true;
        reject(DEADLINE);
      });
      p.then(
        (v) => {
          if (done) return;
          done = true;
          cancel();
          resolve(v);
        },
        (e: unknown) => {
          if (done) return;
          done = true;
          cancel();
          reject(e);
        },
      );
    });
  }
}
