import { createRequire } from 'node:module';
import type pg from 'pg';
import { ConnectionPool } from './connectionPool.js';
import { wallClock, type ApiClock } from './lookup.js';

export interface DbPoolConfig {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly database: string;
  readonly password?: string | undefined;
  /** Connections: the database's concurrency as this api sees it. */
  readonly size: number;
  /**
   * Abandon a connection attempt unanswered after this long (absent: wait for ever). With
   * the client-side query timeout the replacement of a discarded connection needs one
   * too: on a link that loses messages its startup can be lost like a query.
   */
  readonly connectTimeoutMs?: number | undefined;
}

// pg is required when the first connection opens: the simulation imports this module for
// PG_RECONNECT_MS alone, and pg takes a tenth of a second to load.
let pgModule: typeof pg | undefined;
const loadPg = (): typeof pg => (pgModule ??= createRequire(import.meta.url)('pg') as typeof pg);

/** How often a broken connection's replacement is retried while Postgres does not answer. */
export const PG_RECONNECT_MS = 500;

/**
 * A fixed pool of `size` Postgres connections with a FIFO queue of waiters
 * (connectionPool.ts). Opened eagerly, so connection setup is not on the request path;
 * a broken connection is replaced in the background.
 */
export class DbPool {
  private readonly pool: ConnectionPool<pg.Client>;
  private closed = false;
  private readonly broken = new WeakSet<pg.Client>();

  constructor(
    private readonly cfg: DbPoolConfig,
    clock: ApiClock = wallClock,
  ) {
    this.pool = new ConnectionPool(clock);
  }

  async open(): Promise<void> {
    await Promise.all(Array.from({ length: this.cfg.size }, () => this.connect()));
  }

  /** Requests waiting for a connection. */
  get waiting(): number {
    return this.pool.waiting;
  }

  get busy(): number {
    return this.pool.busy;
  }

  private async connect(): Promise<void> {
    const c = new (loadPg().Client)({
      host: this.cfg.host,
      port: this.cfg.port,
      user: this.cfg.user,
      database: this.cfg.database,
      ...(this.cfg.password !== undefined ? { password: this.cfg.password } : {}),
      ...(this.cfg.connectTimeoutMs !== undefined
        ? { connectionTimeoutMillis: this.cfg.connectTimeoutMs }
        : {}),
    });
    c.on('error', () => this.broken.add(c));
    await c.connect();
    this.give(c);
  }

  /** A connection, or undefined when `deadlineMs` (on the pool's clock) passes first. */
  acquire(deadlineMs: number): Promise<pg.Client | undefined> {
    return this.pool.acquire(deadlineMs);
  }

  release(c: pg.Client): void {
    this.pool.returned();
    if (this.broken.has(c)) {
      void c.end().catch(() => undefined);
      if (!this.closed) this.reconnect();
      return;
    }
    this.give(c);
  }

  /**
   * Breaks `c` under a query the client gave up on: its socket is destroyed (not ended: a
   * stalled link would never carry the goodbye), so the query rejects and `release`
   * replaces the connection.
   */
  discard(c: pg.Client): void {
    this.broken.add(c);
    c.connection.stream.destroy();
  }

  private reconnect(): void {
    this.connect().catch(() => setTimeout(() => !this.closed && this.reconnect(), PG_RECONNECT_MS).unref());
  }

  private give(c: pg.Client): void {
    if (this.closed) {
      void c.end().catch(() => undefined);
      return;
    }
    this.pool.give(c);
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.pool.takeIdle().map((c) => c.end().catch(() => undefined)));
  }
}
