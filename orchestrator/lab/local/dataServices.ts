import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { BenchError } from '../../../foundation/errors.js';
import { findPostgresBin, findRedisServer } from './binaries.js';
import { processTree } from '../proc/procUsage.js';
import { asLabProcess } from './pinning.js';
import { pollReady } from './ready.js';

/** A free TCP port on `host` (the kernel's pick; released before the service binds it). */
export async function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen({ host, port: 0 }, () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

type Log = (line: string) => void;

function pipeLog(child: ChildProcess, name: string, log: Log): void {
  const each = (d: Buffer): void => {
    for (const line of d.toString().split('\n')) if (line.trim()) log(`[${name}] ${line}\n`);
  };
  child.stdout?.on('data', each);
  child.stderr?.on('data', each);
}

/** Stops a child: `signal`, then SIGKILL after `graceMs`; SIGCONT first in case it is paused. */
export async function stopChild(child: ChildProcess, signal: NodeJS.Signals, graceMs = 5000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    child.kill('SIGCONT');
    child.kill(signal);
  } catch {
    /* already gone */
  }
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** Retries `probe` until it resolves, the child exits, or the timeout passes. */
function waitReady(name: string, child: ChildProcess, probe: () => Promise<void>): Promise<void> {
  return pollReady(name, probe, () => {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new BenchError(
        'E_LAB_PREFLIGHT',
        `${name} exited while starting (code ${child.exitCode}, signal ${child.signalCode}); see the lab log`,
      );
  });
}

/** A redis-server child process on a free loopback port, without persistence. */
export class RedisServer {
  private child: ChildProcess | undefined;
  port = 0;
  version = 'unknown';

  constructor(
    private readonly host: string,
    private readonly log: Log,
    /** The lab's CPUs when it is pinned (pinning.ts). */
    private readonly cpus?: readonly number[],
  ) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get process(): ChildProcess | undefined {
    return this.child;
  }

  /** Starts redis-server; a restart (after halt) comes back on the same port, empty. */
  async start(): Promise<void> {
    if (this.child) return;
    const bin = findRedisServer();
    if (this.port === 0) this.port = await freePort(this.host);
    const child = spawn(
      ...asLabProcess(this.cpus, bin, [
        '--port',
        String(this.port),
        '--bind',
        this.host,
        '--save',
        '',
        '--appendonly',
        'no',
        '--protected-mode',
        'no',
        '--daemonize',
        'no',
        '--loglevel',
        'warning',
        '--dir',
        tmpdir(),
      ]),
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child.once('error', () => undefined);
    this.child = child;
    pipeLog(child, 'redis', this.log);
    await waitReady('redis-server', child, async () => {
      const r = this.client({ connectTimeout: 1000 });
      try {
        await r.connect();
        const info = await r.info('server');
        this.version = /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown';
      } finally {
        r.disconnect();
      }
    });
  }

  client(extra: { connectTimeout?: number } = {}): Redis {
    const r = new Redis({
      host: this.host,
      port: this.port,
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      ...extra,
    });
    r.on('error', () => undefined);
    return r;
  }

  /** Stops it with `signal` (SIGKILL: killed; SIGTERM: a clean stop); start() brings it back. */
  async halt(signal: NodeJS.Signals): Promise<void> {
    const c = this.child;
    this.child = undefined;
    if (c) await stopChild(c, signal);
  }

  async stop(): Promise<void> {
    await this.halt('SIGTERM');
  }
}

export interface PostgresOptions {
  /** Rows in the `items` table: ids 0..keys (the load's keys are drawn from 1..keys). */
  readonly keys: number;
  readonly maxConnections: number;
}

/**
 * A fresh Postgres: `initdb` in a temporary directory, then `postgres` on a free
 * loopback port, seeded with a table of N keys. As root both run as the `postgres`
 * system user (Postgres refuses to run as root).
 */
export class PostgresServer {
  private child: ChildProcess | undefined;
  private dir: string | undefined;
  port = 0;
  version = 'unknown';
  readonly user = 'postgres';
  readonly database = 'postgres';

  constructor(
    private readonly host: string,
    private readonly opts: PostgresOptions,
    private readonly log: Log,
    /** The lab's CPUs when it is pinned (pinning.ts): the postmaster's backends inherit them. */
    private readonly cpus?: readonly number[],
  ) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The temporary directory holding the data directory (removed by stop()). */
  get dataDir(): string | undefined {
    return this.dir;
  }

  /**
   * The first start creates and seeds the database; a restart (after halt) runs the
   * same data directory on the same port, through Postgres's own crash recovery after a kill.
   */
  async start(): Promise<void> {
    if (this.child) return;
    const bin = findPostgresBin();
    const ids = runAsIds();
    const restart = this.dir !== undefined;
    if (restart) return this.spawn(bin, ids);
    this.dir = mkdtempSync(join(tmpdir(), 'metabench-pg-'));
    if (ids) chownSync(this.dir, ids.uid, ids.gid);
    const data = join(this.dir, 'data');
    const asUser = { ...(ids ?? {}), cwd: this.dir, env: { ...process.env, HOME: this.dir, LC_ALL: 'C' } };
    try {
      execFileSync(
        join(bin, 'initdb'),
        ['-D', data, '-U', this.user, '-A', 'trust', '-E', 'UTF8', '--no-sync', '--no-instructions'],
        { ...asUser, stdio: ['ignore', 'pipe', 'pipe'] },
      );
    } catch (err) {
      const e = err as { stderr?: Buffer; message: string };
      throw new BenchError('E_LAB_PREFLIGHT', `initdb failed: ${e.stderr?.toString().trim() || e.message}`);
    }
    this.port = await freePort(this.host);
    await this.spawn(bin, ids);
    await this.withClient(async (c) => {
      this.version = (
        (await c.query('SHOW server_version')).rows[0] as { server_version: string }
      ).server_version;
      await c.query('CREATE TABLE items (id integer PRIMARY KEY, value text NOT NULL)');
      await c.query('INSERT INTO items SELECT g, md5(g::text) FROM generate_series(0, $1::integer) g', [
        this.opts.keys,
      ]);
      await c.query('ANALYZE items');
    });
  }

  private async spawn(bin: string, ids: { uid: number; gid: number } | undefined): Promise<void> {
    const dir = this.dir!;
    const data = join(dir, 'data');
    const asUser = { ...(ids ?? {}), cwd: dir, env: { ...process.env, HOME: dir, LC_ALL: 'C' } };
    const child = spawn(
      ...asLabProcess(this.cpus, join(bin, 'postgres'), [
        '-D',
        data,
        '-p',
        String(this.port),
        '-k',
        dir,
        '-c',
        `listen_addresses=${this.host}`,
        '-c',
        `max_connections=${this.opts.maxConnections}`,
        // A lab database: nothing to keep after the run, so no durability costs.
        '-c',
        'fsync=off',
        '-c',
        'synchronous_commit=off',
        '-c',
        'full_page_writes=off',
        '-c',
        'shared_buffers=32MB',
      ]),
      { ...asUser, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child.once('error', () => undefined);
    this.child = child;
    pipeLog(child, 'postgres', this.log);
    await waitReady('postgres', child, async () => {
      await this.withClient(async (c) => {
        await c.query('SELECT 1');
      });
    });
  }

  async withClient<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
    const c = new pg.Client({
      host: this.host,
      port: this.port,
      user: this.user,
      database: this.database,
      connectionTimeoutMillis: 2000,
    });
    c.on('error', () => undefined);
    await c.connect();
    try {
      return await fn(c);
    } finally {
      await c.end().catch(() => undefined);
    }
  }

  /**
   * SIGINT: fast shutdown (ends the backends). SIGKILL kills the postmaster and every
   * backend at once, as `docker kill` does to the container (a lone killed postmaster
   * would leave backends holding its shared memory, and no restart).
   */
  async halt(signal: NodeJS.Signals): Promise<void> {
    const c = this.child;
    this.child = undefined;
    if (!c) return;
    if (signal === 'SIGKILL' && c.pid) {
      const tree = processTree(c.pid);
      for (const pid of tree.slice(1))
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          /* gone */
        }
    }
    await stopChild(c, signal, 10_000);
  }

  async stop(): Promise<void> {
    await this.halt('SIGINT');
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
    this.dir = undefined;
  }
}

/** The postgres system user's ids when running as root (Postgres refuses root); undefined otherwise. */
function runAsIds(): { uid: number; gid: number } | undefined {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return undefined;
  try {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    if (Number.isInteger(uid) && Number.isInteger(gid)) return { uid, gid };
  } catch {
    /* no such user */
  }
  throw new BenchError(
    'E_LAB_PREFLIGHT',
    'running as root, Postgres must run as the "postgres" system user, which does not exist ' +
      '(installing the postgresql package creates it; or run metabench as a normal user)',
  );
}
