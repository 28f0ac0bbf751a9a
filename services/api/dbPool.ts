import pg from 'pg';

export interface DbPoolConfig {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly database: string;
  /** Connections: the database's concurrency as this api sees it. */
  readonly size: number;
}

interface Waiter {
  resolve(c: pg.Client | undefined): void;
  timer: NodeJS.Timeout | undefined;
  done: boolean;
}

/**
 * A fixed pool of `size` Postgres connections with a FIFO queue of waiters. Each
 * acquire carries its request's deadline: a waiter whose deadline passes leaves the
 * queue with nothing (the request is abandoned, and no query runs for it). Opened
 * eagerly, so connection setup is not on the request path; a broken connection is
 * replaced in the background.
 */
export class DbPool {
  private readonly idle: pg.Client[] = [];
  /** Taken from waitHead on; a taken slot is cleared (undefined) until the array is compacted. */
  private readonly waiters: (Waiter | undefined)[] = [];
  private waitHead = 0;
  private live = 0;
  private busyCount = 0;
  private closed = false;
  private readonly broken = new WeakSet<pg.Client>();

  constructor(private readonly cfg: DbPoolConfig) {}

  async open(): Promise<void> {
    await Promise.all(Array.from({ length: this.cfg.size }, () => this.connect()));
  }

  /** Requests waiting for a connection. */
  get waiting(): number {
    return this.live;
  }

  get busy(): number {
    return this.busyCount;
  }

  private async connect(): Promise<void> {
    const c = new pg.Client({
      host: this.cfg.host,
      port: this.cfg.port,
      user: this.cfg.user,
      database: this.cfg.database,
    });
    c.on('error', () => this.broken.add(c));
    await c.connect();
    this.give(c);
  }

  /** A connection, or undefined when `deadlineMs` (performance.now() ms) passes first. */
  acquire(deadlineMs: number): Promise<pg.Client | undefined> {
    const c = this.idle.pop();
    if (c) {
      this.busyCount++;
      return Promise.resolve(c);
    }
    return new Promise((resolve) => {
      const w: Waiter = { resolve, timer: undefined, done: false };
      const leftMs = deadlineMs - performance.now();
      if (Number.isFinite(leftMs)) {
        if (leftMs <= 0) return resolve(undefined);
        w.timer = setTimeout(() => {
          w.done = true;
          this.live--;
          resolve(undefined);
        }, leftMs);
      }
      this.waiters.push(w);
      this.live++;
    });
  }

  release(c: pg.Client): void {
    this.busyCount--;
    if (this.broken.has(c)) {
      void c.end().catch(() => undefined);
      if (!this.closed) this.reconnect();
      return;
    }
    this.give(c);
  }

  private reconnect(): void {
    this.connect().catch(() => setTimeout(() => !this.closed && this.reconnect(), 500).unref());
  }

  private give(c: pg.Client): void {
    if (this.closed) {
      void c.end().catch(() => undefined);
      return;
    }
    while (this.waitHead < this.waiters.length) {
      const w = this.waiters[this.waitHead]!;
      this.waiters[this.waitHead++] = undefined;
      if (this.waitHead > 1024 && this.waitHead * 2 > this.waiters.length) {
        this.waiters.splice(0, this.waitHead);
        this.waitHead = 0;
      }
      if (w.done) continue;
      w.done = true;
      this.live--;
      if (w.timer) clearTimeout(w.timer);
      this.busyCount++;
      w.resolve(c);
      return;
    }
    this.idle.push(c);
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.idle.splice(0).map((c) => c.end().catch(() => undefined)));
  }
}
