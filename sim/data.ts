import { ConnectionPool } from '../services/api/connectionPool.js';
import { PG_RECONNECT_MS } from '../services/api/dbPool.js';
import type { SimClock } from './clock.js';
import type { LinkConn, SimLink } from './link.js';
import { SimProcess } from './process.js';

/**
 * The api's data services and its clients for them, as the local lab has them
 * (services/api/readThrough.ts, services/api/dbPool.ts, ioredis, node-postgres):
 *
 * - redis: one connection from the api, commands answered in order, instantly; a
 *   killed redis comes back empty (the lab runs it without persistence);
 * - postgres: a miss query holds one of the pool's connections for its lookup plus
 *   its declared delay (pg_sleep), cancelled by statement_timeout, both wall-clock
 *   waits, so a paused postgres ends them at once when it runs again;
 * - each connection goes through its SimLink (the fault proxy's toxics, partitions).
 */

/** Bytes of a redis command or reply, and of a query or its result (only the bandwidth toxic reads them). */
export const REDIS_CHUNK_BYTES = 64;
export const PG_CHUNK_BYTES = 160;
/** The indexed lookup's own time in postgres, on top of the declared delay (ms). */
export const PG_LOOKUP_MS = 0.2;
/** ioredis's default reconnect delay: min(attempt × 50 ms, 2 s). */
export const redisReconnectDelayMs = (attempt: number): number => Math.min(attempt * 50, 2000);

export class SimRedisServer {
  readonly proc: SimProcess;
  /** key → expiry (ms on the run clock). */
  private readonly data = new Map<number, number>();

  constructor(
    private readonly clock: SimClock,
    readonly link: SimLink,
  ) {
    this.proc = new SimProcess('redis', clock);
  }

  get(key: number): boolean {
    const exp = this.data.get(key);
    if (exp === undefined) return false;
    if (exp <= this.clock.now()) {
      this.data.delete(key);
      return false;
    }
    return true;
  }

  set(key: number, ttlMs: number): void {
    this.data.set(key, this.clock.now() + ttlMs);
  }

  flushAll(): void {
    this.data.clear();
  }

  /** A killed redis loses its data (no persistence in the lab). */
  kill(): void {
    this.proc.kill();
    this.data.clear();
  }

  get keys(): number {
    return this.data.size;
  }
}

interface RedisCmd {
  readonly run: () => unknown;
  readonly resolve: (v: unknown) => void;
  readonly reject: (e: Error) => void;
  done: boolean;
}

/** A command that could not be sent (redis unreachable): ioredis's MaxRetriesPerRequestError. */
export class RedisUnavailable extends Error {}

/**
 * The api's ioredis client: one connection, commands pipelined in order, and
 * ioredis's reconnection as configured in the api (retryStrategy default
 * min(n × 50 ms, 2 s), maxRetriesPerRequest 1, offline queue on). Each `close` (the
 * connection lost, or a reconnection attempt that failed) counts one retry attempt;
 * every second one flushes the waiting commands with an error; a connection that
 * comes up resets the count and sends what waited (the commands in flight when it was
 * lost included). So while redis is unreachable a command fails after 50 ms to a few
 * seconds, and a link that resets every connection keeps commands waiting for ever.
 */
export class SimRedisClient {
  private conn: LinkConn | undefined;
  private inFlight: RedisCmd[] = [];
  private waiting: RedisCmd[] = [];
  private retryAttempts = 0;

  constructor(
    private readonly api: SimProcess,
    private readonly server: SimRedisServer,
  ) {}

  open(): void {
    if (!this.tryConnect()) this.closed();
  }

  get(key: number): Promise<boolean> {
    return this.command(() => this.server.get(key)) as Promise<boolean>;
  }

  set(key: number, ttlMs: number): Promise<void> {
    return this.command(() => this.server.set(key, ttlMs)) as Promise<void>;
  }

  private command(run: () => unknown): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const cmd: RedisCmd = { run, resolve, reject, done: false };
      if (this.conn) this.send(cmd);
      else this.waiting.push(cmd);
    });
  }

  private send(cmd: RedisCmd): void {
    const c = this.conn!;
    const link = this.server.link;
    this.inFlight.push(cmd);
    link.send(c, 'upstream', REDIS_CHUNK_BYTES, () =>
      this.server.proc.deliver(() => {
        const v = cmd.run();
        link.send(c, 'downstream', REDIS_CHUNK_BYTES, () =>
          this.api.deliver(() => {
            if (cmd.done) return;
            cmd.done = true;
            const i = this.inFlight.indexOf(cmd);
            if (i >= 0) this.inFlight.splice(i, 1);
            cmd.resolve(v);
          }),
        );
      }),
    );
  }

  private tryConnect(): boolean {
    if (this.server.proc.state === 'down') return false;
    const c = this.server.link.connect(() => this.api.deliver(() => this.onClose(c!)));
    if (!c) return false;
    this.conn = c;
    return true;
  }

  private onClose(c: LinkConn): void {
    if (this.conn !== c) return;
    this.conn = undefined;
    this.waiting = [...this.inFlight.filter((x) => !x.done), ...this.waiting];
    this.inFlight = [];
    this.closed();
  }

  /** The server died under this connection (kill, stop): as a close. */
  serverDied(): void {
    const c = this.conn;
    if (!c) return;
    this.server.link.release(c);
    this.api.deliver(() => this.onClose(c));
  }

  /** ioredis's close handler: count the attempt, flush every second time, reconnect later. */
  private closed(): void {
    this.retryAttempts++;
    if (this.retryAttempts % 2 === 0) {
      const failed = this.waiting;
      this.waiting = [];
      for (const cmd of failed)
        if (!cmd.done) {
          cmd.done = true;
          cmd.reject(new RedisUnavailable('Reached the max retries per request limit (which is 1)'));
        }
    }
    this.api.at(this.api.now() + redisReconnectDelayMs(this.retryAttempts), () => {
      if (!this.tryConnect()) return this.closed();
      this.retryAttempts = 0;
      const queued = this.waiting;
      this.waiting = [];
      for (const cmd of queued) if (!cmd.done) this.send(cmd);
    });
  }
}

export class SimPostgresServer {
  readonly proc: SimProcess;

  constructor(
    clock: SimClock,
    readonly link: SimLink,
  ) {
    this.proc = new SimProcess('postgres', clock);
  }

  /**
   * Runs one query of `durMs` (lookup + delay) under statement_timeout `timeoutMs`
   * (0: none); `done` hears 'ok' or 'cancelled', inside postgres.
   */
  run(durMs: number, timeoutMs: number, done: (r: 'ok' | 'cancelled') => void): void {
    const now = this.proc.now();
    let over = false;
    const end = (r: 'ok' | 'cancelled'): void => {
      if (over) return;
      over = true;
      done(r);
    };
    // Both are wall-clock waits in postgres: statement_timeout's timer and pg_sleep's
    // end time; whichever is due first wins (the cancel, when both fell in a pause).
    if (timeoutMs > 0 && timeoutMs < durMs) this.proc.at(now + timeoutMs, () => end('cancelled'));
    else this.proc.at(now + durMs, () => end('ok'));
  }
}

/** A query postgres cancelled (statement_timeout), as node-postgres reports it. */
export class QueryCanceled extends Error {
  readonly code = '57014';
}
/** The connection broke (postgres killed, link partitioned or reset). */
export class ConnectionError extends Error {}

/** One node-postgres client of the api's pool. */
export class SimPgConn {
  conn: LinkConn | undefined;
  broken = false;
  private current: { resolve: () => void; reject: (e: Error) => void } | undefined;

  constructor(
    private readonly api: SimProcess,
    private readonly server: SimPostgresServer,
  ) {}

  /**
   * Connects (a round trip to postgres); resolves true when connected, false when it
   * cannot or when `timeoutMs` (0: none) passes first (node-postgres's connectionTimeoutMillis).
   */
  connect(timeoutMs = 0): Promise<boolean> {
    return new Promise((done) => {
      if (this.server.proc.state === 'down') return done(false);
      const c = this.server.link.connect((why) => this.api.deliver(() => this.onClose(c!, why)));
      if (!c) return done(false);
      let settled = false;
      const resolve = (ok: boolean): void => {
        if (settled) return;
        settled = true;
        done(ok);
      };
      if (timeoutMs > 0)
        this.api.at(this.api.now() + timeoutMs, () => {
          if (settled) return;
          this.server.link.release(c);
          resolve(false);
        });
      const link = this.server.link;
      // The startup round trip: a paused postgres answers it when it runs again.
      link.send(c, 'upstream', PG_CHUNK_BYTES, () =>
        this.server.proc.deliver(() =>
          link.send(c, 'downstream', PG_CHUNK_BYTES, () =>
            this.api.deliver(() => {
              if (settled) return;
              this.conn = c;
              this.broken = false;
              resolve(true);
            }),
          ),
        ),
      );
    });
  }

  /** One query; rejects with QueryCanceled (statement_timeout) or ConnectionError. */
  query(timeoutMs: number, durMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const c = this.conn;
      if (this.broken || !c) return reject(new ConnectionError('connection is not queryable'));
      this.current = { resolve, reject };
      const link = this.server.link;
      link.send(c, 'upstream', PG_CHUNK_BYTES, () =>
        this.server.proc.deliver(() =>
          this.server.run(durMs, timeoutMs, (r) =>
            link.send(c, 'downstream', PG_CHUNK_BYTES, () =>
              this.api.deliver(() => {
                const cur = this.current;
                this.current = undefined;
                if (!cur) return;
                if (r === 'ok') cur.resolve();
                else cur.reject(new QueryCanceled('canceling statement due to statement timeout'));
              }),
            ),
          ),
        ),
      );
    });
  }

  /**
   * The api gave up on this connection's query (its client-side timeout): the socket is
   * destroyed, the query rejects, and the pool replaces the connection when it is released.
   */
  discard(): void {
    this.broken = true;
    const c = this.conn;
    if (!c) return;
    this.server.link.release(c);
    this.api.deliver(() => this.onClose(c, 'discarded'));
  }

  private onClose(c: LinkConn, _why: string): void {
    if (this.conn !== c) return;
    this.conn = undefined;
    this.broken = true;
    const cur = this.current;
    this.current = undefined;
    cur?.reject(new ConnectionError('Connection terminated unexpectedly'));
  }

  /** Postgres died under this connection. */
  serverDied(): void {
    const c = this.conn;
    if (!c) return;
    this.server.link.release(c);
    this.api.deliver(() => this.onClose(c, 'server'));
  }
}

/**
 * The api's DbPool (services/api/dbPool.ts) in the simulation: `size` connections
 * behind the api's own ConnectionPool (the FIFO of waiters with their deadlines), on
 * the api process's clock; a broken connection replaced in the background (retried
 * every PG_RECONNECT_MS until postgres answers), as DbPool does.
 */
export class SimDbPool {
  private readonly pool: ConnectionPool<SimPgConn>;
  readonly all: SimPgConn[] = [];

  constructor(
    private readonly api: SimProcess,
    private readonly server: SimPostgresServer,
    private readonly size: number,
    /** The connection attempts' timeout (0: none), as DbPool's connectTimeoutMs. */
    private readonly connectTimeoutMs = 0,
  ) {
    this.pool = new ConnectionPool({ now: () => api.now(), timer: (atMs, fn) => api.at(atMs, fn) });
  }

  /** Opens every connection at once (the api's start, before it listens). */
  open(): void {
    for (let i = 0; i < this.size; i++) {
      const c = new SimPgConn(this.api, this.server);
      this.all.push(c);
      void c.connect(this.connectTimeoutMs).then((ok) => {
        if (ok) this.pool.give(c);
        else {
          c.broken = true;
          this.reconnect(c);
        }
      });
    }
  }

  get waiting(): number {
    return this.pool.waiting;
  }

  get busy(): number {
    return this.pool.busy;
  }

  acquire(deadlineMs: number): Promise<SimPgConn | undefined> {
    return this.pool.acquire(deadlineMs);
  }

  release(c: SimPgConn): void {
    this.pool.returned();
    if (c.broken) {
      this.reconnect(c);
      return;
    }
    this.pool.give(c);
  }

  private reconnect(c: SimPgConn): void {
    void c.connect(this.connectTimeoutMs).then((ok) => {
      if (ok) this.pool.give(c);
      else this.api.at(this.api.now() + PG_RECONNECT_MS, () => this.reconnect(c));
    });
  }
}
