import type { ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { request } from 'undici';
import type { ApiDependencyFlags } from '../../../services/api/config.js';
import { BenchError } from '../../../foundation/errors.js';
import type { Component, Lab, LabProcess, LabTopology, UndoRecipe } from '../Lab.js';
import { LinkClient } from '../links.js';
import { findPostgresBin, findRedisServer } from './binaries.js';
import { PostgresServer, RedisServer, stopChild } from './dataServices.js';
import { processTree } from '../proc/procUsage.js';
import { apiArgs, faultProxyArgs, llmStubArgs } from './recipes.js';
import type { LocalCacheConfig, LocalLabConfig, LocalLlmConfig } from '../labConfig.js';
import { PausedTrees, resumeRecipe, startNodeService, teardownRecipe } from './supervisor.js';
import { localTopology } from './topology.js';
import { scrapeLabText } from '../scrapeApi.js';

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
  private readonly paused = new PausedTrees();
  private faultProxy: ChildProcess | undefined;
  private llmStub: ChildProcess | undefined;
  private llmPort = 0;
  faultProxyApi: string | undefined;
  private readonly linkAddrs = new Map<string, { listen: string; upstream: string }>();
  /** How the api reaches its dependencies (their links), once they are up. */
  private deps: ApiDependencyFlags = {};

  constructor(private readonly cfg: LocalLabConfig) {}

  /** Into the lab log, while it is open. */
  private readonly write = (text: string): void => void this.log?.write(text);

  get apiUrl(): string {
    return `http://${this.cfg.host}:${this.apiPort}`;
  }

  /** The stub provider's own address (its run-time switch), once it has started. */
  get llmUrl(): string | undefined {
    return this.cfg.llm && this.llmPort > 0 ? `http://${this.cfg.host}:${this.llmPort}` : undefined;
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

  private async spawnApi(port: number): Promise<void> {
    this.apiPort = await startNodeService(apiArgs(this.cfg, port, this.deps), {
      tag: 'api',
      what: 'the api',
      log: this.write,
      spawned: (child) => {
        this.api = child;
        this.cfg.onProcessesChanged?.();
      },
    });
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
    const port = await startNodeService(faultProxyArgs(this.cfg), {
      tag: 'faultproxy',
      what: 'the fault proxy',
      log: this.write,
      spawned: (child) => {
        this.faultProxy = child;
        this.cfg.onProcessesChanged?.();
      },
    });
    this.faultProxyApi = `http://${this.cfg.host}:${port}`;
  }

  /** The stub LLM provider as a child process behind its `llm` link; returns how the api reaches it. */
  private async startLlmStub(c: LocalLlmConfig): Promise<NonNullable<ApiDependencyFlags['llm']>> {
    await this.spawnLlmStub(c, 0);
    const via = await this.startFaultProxy({ llm: `${this.cfg.host}:${this.llmPort}` });
    return { address: via.llm!, slots: c.slots, timeoutMs: c.timeoutMs, retry: c.retry };
  }

  /** Spawns the stub; `port` 0 lets it pick (the first start), else its old port (a restart behind the same link). */
  private async spawnLlmStub(c: LocalLlmConfig, port: number): Promise<void> {
    this.llmPort = await startNodeService(llmStubArgs(this.cfg, c, port), {
      tag: 'llm',
      what: 'the llm stub',
      log: this.write,
      spawned: (child) => {
        this.llmStub = child;
        this.cfg.onProcessesChanged?.();
      },
    });
  }

  /** Starts Postgres and Redis (in parallel), seeds and pre-warms; returns how the api reaches them. */
  private async startDataServices(c: LocalCacheConfig): Promise<NonNullable<ApiDependencyFlags['cache']>> {
    // Preflight: both binaries present before anything starts.
    findRedisServer();
    findPostgresBin();
    this.redis = new RedisServer(this.cfg.host, this.write);
    this.postgres = new PostgresServer(
      this.cfg.host,
      { keys: c.keys, maxConnections: Math.max(20, c.pool + 10) },
      this.write,
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
    this.paused.resumeAll('api');
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
    this.paused.forget(c);
    if (c === 'api' || c === 'llm') await stopChild(this.nodeChild(c), 'SIGKILL', 0);
    else await this.dataService(c).halt('SIGKILL');
  }

  async stop(c: Component): Promise<void> {
    this.paused.forget(c);
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

  teardownRecipe(): UndoRecipe {
    return teardownRecipe(this.processes(), this.postgres?.dataDir);
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
    this.paused.pause(c, this.pidOf(c), () => this.pauseTargets(c));
  }

  async resume(c: Component): Promise<void> {
    this.paused.resume(c);
  }

  pauseUndoRecipe(c: Component): UndoRecipe {
    return resumeRecipe(c, this.pauseTargets(c));
  }

  scrapeText(c: Component, timeoutMs: number): Promise<string> {
    return scrapeLabText(this, c, timeoutMs);
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
    return localTopology({
      cfg: this.cfg,
      apiUrl: this.apiUrl,
      apiPid: this.api?.pid,
      redis: this.redis,
      postgres: this.postgres,
      llm: this.llmStub ? { pid: this.llmStub.pid, port: this.llmPort } : undefined,
      links: this.linkAddrs,
      faultProxyApi: this.faultProxyApi,
    });
  }
}
