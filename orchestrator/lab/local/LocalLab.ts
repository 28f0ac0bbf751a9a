import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { request } from 'undici';
import { apiFlags, formatDurationDist, type ApiDependencyFlags } from '../../../services/api/config.js';
import { BenchError } from '../../../foundation/errors.js';
import type { Component, Lab, LabProcess, LabTopology, UndoRecipe } from '../Lab.js';
import { processStartTicks } from '../proc/procStat.js';
import { processTree } from '../proc/procUsage.js';
import { PostgresServer, RedisServer, stopChild } from './dataServices.js';
import { findPostgresBin, findRedisServer } from './binaries.js';
import { LinkClient } from '../links.js';
import type { LocalCacheConfig, LocalLabConfig, LocalLlmConfig } from '../labConfig.js';

export type { LocalCacheConfig, LocalLabConfig, LocalLlmConfig } from '../labConfig.js';

const LLM_STUB_MAIN = fileURLToPath(new URL('../../../services/llm-stub/main.js', import.meta.url));
const API_MAIN = fileURLToPath(new URL('../../../services/api/main.js', import.meta.url));
const FAULTPROXY_MAIN = fileURLToPath(new URL('../../../services/faultproxy/main.js', import.meta.url));
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
  private log: WriteStream | undefined;
  private redis: RedisServer | undefined;
  private postgres: PostgresServer | undefined;
  private readonly pausedTrees = new Map<Component, number[]>();
  private faultProxy: ChildProcess | undefined;
  private llmStub: ChildProcess | undefined;
  private llmPort = 0;
  faultProxyApi: string | undefined;
  private readonly linkAddrs = new Map<string, { listen: string; upstream: string }>();
  /** The api's flags that reach the cache and database (through their links). */
  /** How the api reaches its dependencies (their links), once they are up. */
  private deps: ApiDependencyFlags = {};

  constructor(private readonly cfg: LocalLabConfig) {}

  get apiUrl(): string {
    return `http://${this.cfg.host}:${this.apiPort}`;
  }

  async up(): Promise<void> {
    if (this.api) return;
    if (this.cfg.logFile) this.log = createWriteStream(this.cfg.logFile, { flags: 'a' });
    this.deps = {
      ...(this.cfg.cache ? { cache: await this.startDataServices(this.cfg.cache) } : {}),
      ...(this.cfg.llm ? { llm: await this.startLlmStub(this.cfg.llm) } : {}),
    };
    await this.spawnApi(this.cfg.apiPort);
  }

  /** The api's command line; `port` 0 lets it pick (the first start), else its old port (a restart). */
  private apiArgs(port: number): string[] {
    return [
      API_MAIN,
      '--host',
      this.cfg.host,
      '--port',
      String(port),
      ...apiFlags(this.cfg, this.deps),
      '--exit-with-parent',
    ];
  }

  private async spawnApi(port: number): Promise<void> {
    const child = spawn(process.execPath, this.apiArgs(port), { stdio: ['pipe', 'pipe', 'pipe'] });
    this.api = child;
    this.cfg.onProcessesChanged?.();
    child.stderr?.on('data', (d: Buffer) => this.log?.write(`[api] ${d}`));
    const msg = await readyLine(child, 'the api', (line) => this.log?.write(`[api] ${line}\n`));
    this.apiPort = msg.port;
    const res = await request(`${this.apiUrl}/health`, { headersTimeout: 5000, bodyTimeout: 5000 });
    await res.body.dump();
    if (res.statusCode !== 200)
      throw new BenchError('E_LAB_PREFLIGHT', `the api's health check answered ${res.statusCode}`);
  }

  /**
   * The fault proxy (our Toxiproxy-API server) as a child process, with one link per
   * dependency; the api is given the links' addresses, never the dependencies' own.
   */
  private async startFaultProxy(deps: Record<string, string>): Promise<Record<string, string>> {
    if (!this.faultProxyApi) await this.spawnFaultProxy();
    const links = new LinkClient(this.faultProxyApi!);
    const out: Record<string, string> = {};
    for (const [name, upstream] of Object.entries(deps)) {
      const l = await links.ensureLink({ name, listen: `${this.cfg.host}:0`, upstream });
      this.linkAddrs.set(name, { listen: l.listen, upstream });
      out[name] = l.listen;
    }
    return out;
  }

  private async spawnFaultProxy(): Promise<void> {
    const child = spawn(
      process.execPath,
      [
        FAULTPROXY_MAIN,
        '-host',
        this.cfg.host,
        '-port',
        '0',
        '-seed',
        String(this.cfg.seed),
        '-exit-with-parent',
      ],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    this.faultProxy = child;
    this.cfg.onProcessesChanged?.();
    child.stderr?.on('data', (d: Buffer) => this.log?.write(`[faultproxy] ${d}`));
    const msg = await readyLine(child, 'the fault proxy', (line) =>
      this.log?.write(`[faultproxy] ${line}\n`),
    );
    this.faultProxyApi = `http://${this.cfg.host}:${msg.port}`;
  }

  /** The stub LLM provider as a child process behind its `llm` link; returns how the api reaches it. */
  private async startLlmStub(c: LocalLlmConfig): Promise<NonNullable<ApiDependencyFlags['llm']>> {
    await this.spawnLlmStub(c, 0);
    const via = await this.startFaultProxy({ llm: `${this.cfg.host}:${this.llmPort}` });
    return { address: via.llm!, slots: c.slots, timeoutMs: c.timeoutMs, retry: c.retry };
  }

  /** Spawns the stub; `port` 0 lets it pick (the first start), else its old port (a restart behind the same link). */
  private async spawnLlmStub(c: LocalLlmConfig, port: number): Promise<void> {
    const r = c.rates;
    const child = spawn(
      process.execPath,
      [
        LLM_STUB_MAIN,
        '--host',
        this.cfg.host,
        '--port',
        String(port),
        '--profile',
        c.profileFile,
        '--seed',
        String(this.cfg.seed),
        '--error-rate',
        String(r.serverError),
        '--timeout-rate',
        String(r.hang),
        '--rate-limit-rate',
        String(r.rateLimit),
        '--cut-rate',
        String(r.cut),
        '--context-rate',
        String(r.contextLength),
        '--exit-with-parent',
      ],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    this.llmStub = child;
    this.cfg.onProcessesChanged?.();
    child.stderr?.on('data', (d: Buffer) => this.log?.write(`[llm] ${d}`));
    const msg = await readyLine(child, 'the llm stub', (line) => this.log?.write(`[llm] ${line}\n`));
    this.llmPort = msg.port;
  }

  /** Starts Postgres and Redis (in parallel), seeds and pre-warms; returns how the api reaches them. */
  private async startDataServices(c: LocalCacheConfig): Promise<NonNullable<ApiDependencyFlags['cache']>> {
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
    await Promise.all([this.redis.start(), this.postgres.start()]).finally(() =>
      this.cfg.onProcessesChanged?.(),
    );
    if (c.prewarm) await this.prewarm(c);
    const via = await this.startFaultProxy({
      redis: `${this.cfg.host}:${this.redis.port}`,
      postgres: `${this.cfg.host}:${this.postgres.port}`,
    });
    return {
      redis: via.redis!,
      postgres: via.postgres!,
      dbUser: this.postgres.user,
      dbName: this.postgres.database,
      pool: c.pool,
      queryDelay: c.queryDelay,
      ttlS: c.ttlS,
    };
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
    if (child) await stopChild(child, 'SIGTERM', 3000);
    for (const [c, pids] of this.pausedTrees) if (c !== 'api') signalAll(pids, 'SIGCONT');
    this.pausedTrees.clear();
    const stub = this.llmStub;
    this.llmStub = undefined;
    if (stub) await stopChild(stub, 'SIGTERM', 3000);
    const fp = this.faultProxy;
    this.faultProxy = undefined;
    if (fp) await stopChild(fp, 'SIGTERM', 3000);
    await Promise.all([this.redis?.stop(), this.postgres?.stop()]);
    this.redis = undefined;
    this.postgres = undefined;
    await new Promise<void>((resolve) => (this.log ? this.log.end(() => resolve()) : resolve()));
    this.log = undefined;
  }

  private pidOf(c: Component): number {
    const pid =
      c === 'api'
        ? this.api?.pid
        : c === 'redis'
          ? this.redis?.pid
          : c === 'postgres'
            ? this.postgres?.pid
            : this.llmStub?.pid;
    if (!pid || (c === 'api' && (this.api?.exitCode !== null || this.api?.signalCode !== null)))
      throw new BenchError('E_LAB', `component "${c}" is not running in this lab`);
    return pid;
  }

  /** The api or the llm stub: node children of this lab, restarted on their old port. */
  private nodeChild(c: 'api' | 'llm'): ChildProcess {
    const child = c === 'api' ? this.api : this.llmStub;
    if (!child) throw new BenchError('E_LAB', `component "${c}" is not running in this lab`);
    return child;
  }

  async kill(c: Component): Promise<void> {
    this.pausedTrees.delete(c);
    if (c === 'api' || c === 'llm') await stopChild(this.nodeChild(c), 'SIGKILL', 0);
    else await this.dataService(c).halt('SIGKILL');
  }

  async stop(c: Component): Promise<void> {
    this.pausedTrees.delete(c);
    if (c === 'api' || c === 'llm') await stopChild(this.nodeChild(c), 'SIGTERM', 5000);
    else await this.dataService(c).halt(c === 'postgres' ? 'SIGINT' : 'SIGTERM');
  }

  async start(c: Component): Promise<void> {
    if (c === 'api' || c === 'llm') {
      const child = this.nodeChild(c);
      if (child.exitCode === null && child.signalCode === null) return;
      if (c === 'api') await this.spawnApi(this.apiPort);
      else await this.spawnLlmStub(this.cfg.llm!, this.llmPort);
    } else {
      await this.dataService(c).start();
      this.cfg.onProcessesChanged?.();
    }
  }

  /**
   * SIGKILL to every process the lab started (Postgres's whole tree: its backends would
   * otherwise hold the shared memory), the paused ones continued first so nothing stays
   * frozen, then the Postgres data directory removed. The api and the fault proxy also
   * exit by themselves when the orchestrator dies; Redis and Postgres do not.
   */
  teardownRecipe(): UndoRecipe {
    const targets = this.processes().flatMap((p) =>
      (p.component === 'postgres' ? processTree(p.pid) : [p.pid]).map((pid) => ({
        pid,
        startTicks: processStartTicks(pid),
      })),
    );
    if (targets.length === 0) return { kind: 'none', what: 'the lab (nothing running)' };
    const dir = this.postgres?.dataDir;
    return {
      kind: 'steps',
      what: `stop the lab (${this.processes()
        .map((p) => p.component)
        .join(', ')})`,
      steps: [
        { kind: 'signals', targets, signal: 'SIGCONT', what: 'continue' },
        { kind: 'signals', targets, signal: 'SIGKILL', what: 'kill' },
        ...(dir ? [{ kind: 'remove' as const, path: dir, what: `remove Postgres's data directory` }] : []),
      ],
    };
  }

  /** Locally a killed component dies with the lab, which `lab reset` stops: nothing to start. */
  startUndoRecipe(c: Component): UndoRecipe {
    return { kind: 'none', what: `start ${c} again (the local lab is stopped instead)` };
  }

  private dataService(c: Component): RedisServer | PostgresServer {
    const d = c === 'redis' ? this.redis : c === 'postgres' ? this.postgres : undefined;
    if (!d) throw new BenchError('E_LAB', `component "${c}" is not running in this lab`);
    return d;
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
  }

  async resume(c: Component): Promise<void> {
    const pids = this.pausedTrees.get(c);
    this.pausedTrees.delete(c);
    if (pids) signalAll(pids, 'SIGCONT');
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
    if (this.llmStub?.pid)
      out.push({ component: 'llm', pid: this.llmStub.pid, command: 'node services/llm-stub/main.js' });
    if (this.faultProxy?.pid)
      out.push({
        component: 'faultproxy',
        pid: this.faultProxy.pid,
        command: 'node services/faultproxy/main.js',
      });
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
        ...(this.llmStub && this.cfg.llm
          ? [
              {
                name: 'llm' as const,
                url: `http://${this.cfg.host}:${this.llmPort}`,
                pid: this.llmStub.pid ?? null,
                config: {
                  profile: this.cfg.llm.profileName,
                  profileFile: this.cfg.llm.profileFile,
                  rates: this.cfg.llm.rates,
                  apiSlots: this.cfg.llm.slots,
                  apiTimeoutMs: this.cfg.llm.timeoutMs,
                  apiRetry: this.cfg.llm.retry,
                },
              },
            ]
          : []),
      ],
      ...(this.linkAddrs.size > 0
        ? {
            links: (['redis', 'postgres', 'llm'] as const)
              .filter((to) => this.linkAddrs.has(to))
              .map((to) => {
                const l = this.linkAddrs.get(to);
                return {
                  from: 'api' as const,
                  to,
                  address: l?.listen ?? '',
                  ...(l && this.faultProxyApi
                    ? { proxy: { name: to, upstream: l.upstream, api: this.faultProxyApi } }
                    : {}),
                };
              }),
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

/** Waits for a child's {"event":"listening","port":N} line on stdout; rejects if it exits or takes too long. */
function readyLine(
  child: ChildProcess,
  what: string,
  log: (line: string) => void,
): Promise<{ port: number }> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(
          new BenchError('E_LAB_PREFLIGHT', `${what} did not start within ${START_TIMEOUT_MS / 1000} s`),
        ),
      START_TIMEOUT_MS,
    );
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      log(line);
      try {
        const msg = JSON.parse(line) as { event?: string; port?: number };
        if (msg.event === 'listening' && typeof msg.port === 'number') {
          clearTimeout(timer);
          resolve({ port: msg.port });
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
          `${what} exited while starting (code ${code}, signal ${signal}); see the lab log`,
        ),
      );
    });
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(new BenchError('E_LAB_PREFLIGHT', `cannot start ${what}: ${err.message}`));
    });
  });
}
