import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { request } from 'undici';
import type { DurationDist } from '../../../bench/distributions.js';
import { formatDurationDist, mitigationFlags } from '../../../services/api/config.js';
import type { Mitigations } from '../../../services/api/server.js';
import { BenchError } from '../../errors.js';
import type { Component, Lab, LabProcess, LabTopology, UndoRecipe } from '../Lab.js';
import { processStartTicks } from './procStat.js';
import { processTree } from './procUsage.js';
import { PostgresServer, RedisServer } from './dataServices.js';
import { findPostgresBin, findRedisServer } from './binaries.js';

export interface LocalLabConfig {
  readonly host: string;
  /** 0 lets the api pick a free port. */
  readonly apiPort: number;
  readonly workers: number;
  readonly work: DurationDist;
  readonly costs?: Readonly<Record<string, DurationDist>>;
  readonly seed: number;
  /** The api's server-side mitigations (all off when absent). */
  readonly mitigations?: Mitigations;
  /** Server-side request timeout of the api (ms from arrival). */
  readonly requestTimeoutMs?: number;
  /** A read-through cache (redis-server) in front of a database (postgres), both started by the lab. */
  readonly cache?: LocalCacheConfig;
  /** Where the components' stdout/stderr go (a file in the run folder); undefined discards them. */
  readonly logFile?: string;
}

export interface LocalCacheConfig {
  readonly ttlS: number;
  /** Fill the cache with every key before the run (as the OSDI '22 reproducer did), so the cold start is not itself a trigger. */
  readonly prewarm: boolean;
  /** Rows in the database's table (ids 0..keys). */
  readonly keys: number;
  /** The api's DB connection pool size p. */
  readonly pool: number;
  /** Server-side delay of each miss query. */
  readonly queryDelay: DurationDist;
}

const API_MAIN = fileURLToPath(new URL('../../../services/api/main.js', import.meta.url));
const START_TIMEOUT_MS = 15_000;

/**
 * The lab as child processes on loopback. Pause is SIGSTOP / SIGCONT: the process
 * keeps its sockets and the kernel keeps accepting connections into its backlog, the
 * same semantics as `docker pause` (a frozen cgroup).
 */
export class LocalLab implements Lab {
  readonly runtime = 'local' as const;
  private api: ChildProcess | undefined;
  private apiPort = 0;
  private paused = false;
  private log: WriteStream | undefined;
  private redis: RedisServer | undefined;
  private postgres: PostgresServer | undefined;
  private readonly pausedTrees = new Map<Component, number[]>();

  constructor(private readonly cfg: LocalLabConfig) {}

  get apiUrl(): string {
    return `http://${this.cfg.host}:${this.apiPort}`;
  }

  async up(): Promise<void> {
    if (this.api) return;
    if (this.cfg.logFile) this.log = createWriteStream(this.cfg.logFile, { flags: 'a' });
    const cacheArgs = this.cfg.cache ? await this.startDataServices(this.cfg.cache) : [];
    const args = [
      API_MAIN,
      '--host',
      this.cfg.host,
      '--port',
      String(this.cfg.apiPort),
      '--workers',
      String(this.cfg.workers),
      '--work',
      formatDurationDist(this.cfg.work),
      '--seed',
      String(this.cfg.seed),
      ...Object.entries(this.cfg.costs ?? {}).flatMap(([name, d]) => [
        '--cost',
        `${name}=${formatDurationDist(d)}`,
      ]),
      ...mitigationFlags(this.cfg.mitigations ?? {}),
      ...(this.cfg.requestTimeoutMs !== undefined
        ? ['--request-timeout', String(this.cfg.requestTimeoutMs)]
        : []),
      ...cacheArgs,
      '--exit-with-parent',
    ];
    const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    this.api = child;
    child.stderr?.on('data', (d: Buffer) => this.log?.write(`[api] ${d}`));
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new BenchError('E_LAB_PREFLIGHT', `the api did not start within ${START_TIMEOUT_MS / 1000} s`),
          ),
        START_TIMEOUT_MS,
      );
      const lines = createInterface({ input: child.stdout! });
      lines.on('line', (line) => {
        this.log?.write(`[api] ${line}\n`);
        try {
          const msg = JSON.parse(line) as { event?: string; port?: number };
          if (msg.event === 'listening' && typeof msg.port === 'number') {
            clearTimeout(timer);
            resolve(msg.port);
          }
        } catch {
          /* not a status line */
        }
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(
          new BenchError(
            'E_LAB_PREFLIGHT',
            `the api exited while starting (code ${code}, signal ${signal}); see the lab log`,
          ),
        );
      });
      child.once('error', (err) => {
        clearTimeout(timer);
        reject(new BenchError('E_LAB_PREFLIGHT', `cannot start the api: ${err.message}`));
      });
    });
    this.apiPort = port;
    const res = await request(`${this.apiUrl}/health`, { headersTimeout: 5000, bodyTimeout: 5000 });
    await res.body.dump();
    if (res.statusCode !== 200)
      throw new BenchError('E_LAB_PREFLIGHT', `the api's health check answered ${res.statusCode}`);
  }

  /** Starts Postgres and Redis (in parallel), seeds and pre-warms; returns the api's flags to reach them. */
  private async startDataServices(c: LocalCacheConfig): Promise<string[]> {
    // Preflight: both binaries present before anything starts.
    findRedisServer();
    findPostgresBin();
    const log = (line: string): void => void this.log?.write(line);
    this.redis = new RedisServer(this.cfg.host, log);
    this.postgres = new PostgresServer(
      this.cfg.host,
      { keys: c.keys, maxConnections: Math.max(20, c.pool + 10) },
      log,
    );
    await Promise.all([this.redis.start(), this.postgres.start()]);
    if (c.prewarm) await this.prewarm(c);
    return [
      '--redis',
      `${this.cfg.host}:${this.redis.port}`,
      '--postgres',
      `${this.cfg.host}:${this.postgres.port}`,
      '--db-user',
      this.postgres.user,
      '--db-name',
      this.postgres.database,
      '--db-pool',
      String(c.pool),
      '--db-delay',
      formatDurationDist(c.queryDelay),
      '--cache-ttl',
      String(c.ttlS),
    ];
  }

  /** Every row of the table into the cache, with the api's key format and TTL. */
  private async prewarm(c: LocalCacheConfig): Promise<void> {
    const rows = await this.postgres!.withClient(
      async (db) => (await db.query('SELECT id, value FROM items')).rows as { id: number; value: string }[],
    );
    const r = this.redis!.client();
    try {
      await r.connect();
      for (let i = 0; i < rows.length; i += 1000) {
        const p = r.pipeline();
        for (const row of rows.slice(i, i + 1000)) p.set(`item:${row.id}`, row.value, 'EX', c.ttlS);
        await p.exec();
      }
    } finally {
      r.disconnect();
    }
  }

  async flushCache(): Promise<void> {
    if (!this.redis?.pid) throw new BenchError('E_LAB', 'this lab has no cache to flush');
    const r = this.redis.client({ connectTimeout: 2000 });
    try {
      await r.connect();
      await r.flushall();
    } finally {
      r.disconnect();
    }
  }

  async down(): Promise<void> {
    const child = this.api;
    this.api = undefined;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      try {
        if (this.paused) child.kill('SIGCONT');
        child.kill('SIGTERM');
      } catch {
        /* already gone */
      }
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(timer);
    }
    this.paused = false;
    for (const [c, pids] of this.pausedTrees) if (c !== 'api') signalAll(pids, 'SIGCONT');
    this.pausedTrees.clear();
    await Promise.all([this.redis?.stop(), this.postgres?.stop()]);
    this.redis = undefined;
    this.postgres = undefined;
    await new Promise<void>((resolve) => (this.log ? this.log.end(() => resolve()) : resolve()));
    this.log = undefined;
  }

  private pidOf(c: Component): number {
    const pid = c === 'api' ? this.api?.pid : c === 'redis' ? this.redis?.pid : this.postgres?.pid;
    if (!pid) throw new BenchError('E_LAB', `component "${c}" is not running in this lab`);
    return pid;
  }

  /**
   * The processes a pause freezes: the api and redis are one process each; Postgres is
   * the postmaster and its backends (like `docker pause`, which freezes the whole cgroup).
   */
  private pauseTargets(c: Component): number[] {
    const pid = this.pidOf(c);
    return c === 'postgres' ? processTree(pid) : [pid];
  }

  async pause(c: Component): Promise<void> {
    // The root first, so it forks nothing more; then the tree as it is now.
    signalAll([this.pidOf(c)], 'SIGSTOP');
    const pids = this.pauseTargets(c);
    this.pausedTrees.set(c, pids);
    signalAll(pids, 'SIGSTOP');
    if (c === 'api') this.paused = true;
  }

  async resume(c: Component): Promise<void> {
    const pids = this.pausedTrees.get(c);
    this.pausedTrees.delete(c);
    if (pids) signalAll(pids, 'SIGCONT');
    if (c === 'api') this.paused = false;
  }

  pauseUndoRecipe(c: Component): UndoRecipe {
    const pids = this.pauseTargets(c);
    if (pids.length === 1) {
      const pid = pids[0]!;
      return {
        kind: 'signal',
        pid,
        startTicks: processStartTicks(pid),
        signal: 'SIGCONT',
        what: `resume ${c} (pid ${pid})`,
      };
    }
    return {
      kind: 'signals',
      targets: pids.map((pid) => ({ pid, startTicks: processStartTicks(pid) })),
      signal: 'SIGCONT',
      what: `resume ${c} (pids ${pids.join(', ')})`,
    };
  }

  async scrapeText(c: Component, timeoutMs: number): Promise<string> {
    if (c !== 'api') throw new BenchError('E_LAB', `component "${c}" has no metrics`);
    const res = await request(`${this.apiUrl}/metrics`, { signal: AbortSignal.timeout(timeoutMs) });
    return res.body.text();
  }

  processes(): readonly LabProcess[] {
    const out: LabProcess[] = [];
    if (this.api?.pid)
      out.push({ component: 'api', pid: this.api.pid, command: 'node services/api/main.js' });
    if (this.redis?.pid) out.push({ component: 'redis', pid: this.redis.pid, command: 'redis-server' });
    if (this.postgres?.pid) out.push({ component: 'postgres', pid: this.postgres.pid, command: 'postgres' });
    return out;
  }

  topology(): LabTopology {
    return {
      runtime: 'local',
      components: [
        {
          name: 'api',
          url: this.apiUrl,
          pid: this.api?.pid ?? null,
          config: {
            ...(this.cfg.costs
              ? {
                  costs: Object.fromEntries(
                    Object.entries(this.cfg.costs).map(([k, d]) => [k, formatDurationDist(d)]),
                  ),
                }
              : {}),
            workers: this.cfg.workers,
            work: formatDurationDist(this.cfg.work),
            queue: this.cfg.mitigations?.queue ?? 'fifo',
            mitigations: this.cfg.mitigations ?? {},
            seed: this.cfg.seed,
            ...(this.cfg.requestTimeoutMs !== undefined
              ? { requestTimeoutMs: this.cfg.requestTimeoutMs }
              : {}),
          },
        },
        ...(this.redis && this.cfg.cache
          ? [
              {
                name: 'redis' as const,
                url: `redis://${this.cfg.host}:${this.redis.port}`,
                pid: this.redis.pid ?? null,
                version: this.redis.version,
                config: { ttlS: this.cfg.cache.ttlS, prewarm: this.cfg.cache.prewarm, persistence: 'none' },
              },
            ]
          : []),
        ...(this.postgres && this.cfg.cache
          ? [
              {
                name: 'postgres' as const,
                url: `postgres://${this.postgres.user}@${this.cfg.host}:${this.postgres.port}/${this.postgres.database}`,
                pid: this.postgres.pid ?? null,
                version: this.postgres.version,
                config: {
                  keys: this.cfg.cache.keys,
                  pool: this.cfg.cache.pool,
                  queryDelay: formatDurationDist(this.cfg.cache.queryDelay),
                  query: 'SELECT value, pg_sleep(delay) FROM items WHERE id = $key (primary-key index)',
                  fsync: false,
                },
              },
            ]
          : []),
      ],
      ...(this.redis && this.postgres
        ? {
            links: [
              { from: 'api' as const, to: 'redis' as const, address: `${this.cfg.host}:${this.redis.port}` },
              {
                from: 'api' as const,
                to: 'postgres' as const,
                address: `${this.cfg.host}:${this.postgres.port}`,
              },
            ],
          }
        : {}),
    };
  }
}

function signalAll(pids: readonly number[], signal: NodeJS.Signals): void {
  for (const pid of pids)
    try {
      process.kill(pid, signal);
    } catch {
      /* gone */
    }
}
