import type { ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { request } from 'undici';
import type { ApiDependencyFlags } from '../../../services/api/config.js';
import { BenchError } from '../../../foundation/errors.js';
import type { Component, Lab, LabProcess, LabTopology, Target, UndoRecipe } from '../Lab.js';
import { replicaIndices, targetOf, type ParsedTarget } from '../target.js';
import { LinkClient } from '../links.js';
import { apiLinkProxy } from '../apiLink.js';
import { findPostgresBin, findRedisServer } from './binaries.js';
import { PostgresServer, RedisServer, stopChild } from './dataServices.js';
import { processTree } from '../proc/procUsage.js';
import { apiArgs, faultProxyArgs, llmStubArgs } from './recipes.js';
import type { LocalCacheConfig, LocalLabConfig, LocalLlmConfig } from '../labConfig.js';
import { PausedTrees, resumeRecipe, startNodeService, teardownRecipe } from './supervisor.js';
import { localTopology } from './topology.js';
import { scrapeLabText } from '../scrapeApi.js';
import type { Pinning } from '../proc/affinity.js';
import { acquirePinning, releasePinning } from './pinning.js';
import { ReferenceApi } from './referenceApi.js';
import { cgroupDirOf, cpuCgroups, limitCpu, quotaDir, unlimitCpu, unlimitRecipe } from './cpuQuota.js';

/** One api process of the lab (replica i of lab.api.replicas), and the port it keeps across restarts. */
interface ApiReplica {
  child: ChildProcess | undefined;
  port: number;
}

/**
 * The lab as child processes on loopback. Pause is SIGSTOP / SIGCONT: the process
 * keeps its sockets and the kernel keeps accepting connections into its backlog, the
 * same semantics as `docker pause` (a frozen cgroup). With lab.api.replicas the api is
 * N processes, each on its own port, each reaching the same dependency links.
 */
export class LocalLab implements Lab {
  /** CPU quotas set (cgroup directory → the cgroup its processes came from). */
  private readonly cpuQuotas = new Map<string, string>();
  readonly runtime = 'local' as const;
  private readonly apis: ApiReplica[];
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
  /** The CPU pinning of the lab's last up() (pinning.ts); held until down(). */
  private pinned: Pinning | undefined;
  private holdsPin = false;
  /** The reference server that plays the api (lab.api.server), when the experiment names one. */
  private readonly ref: ReferenceApi | undefined;

  constructor(private readonly cfg: LocalLabConfig) {
    this.apis = Array.from({ length: cfg.replicas ?? 1 }, () => ({ child: undefined, port: 0 }));
    this.ref = cfg.server
      ? new ReferenceApi(cfg.server, { workers: cfg.workers, workMs: cfg.work.meanMs }, this.write)
      : undefined;
  }

  /** Into the lab log, while it is open. */
  private readonly write = (text: string): void => void this.log?.write(text);

  private urlOf(i: number): string {
    return `http://${this.cfg.host}:${this.apis[i]!.port}`;
  }

  get apiUrl(): string {
    return this.urlOf(0);
  }

  get apiUrls(): readonly string[] {
    return this.apis.map((_, i) => this.urlOf(i));
  }

  /** Through the api link's proxies once they exist (lab.api.link, or a trigger on link api). */
  get clientUrls(): readonly string[] | undefined {
    if (!this.cfg.apiLink) return undefined;
    const n = this.apis.length;
    const via = this.apis.map((_, i) => this.linkAddrs.get(apiLinkProxy(i, n))?.listen);
    return via.every((l) => l !== undefined) ? via.map((l) => `http://${l}`) : undefined;
  }

  /** The stub provider's own address (its run-time switch), once it has started. */
  get llmUrl(): string | undefined {
    return this.cfg.llm && this.llmPort > 0 ? `http://${this.cfg.host}:${this.llmPort}` : undefined;
  }

  /** What manifest.json records of the CPU pinning, once up() has run. */
  get pinning(): Pinning | undefined {
    return this.pinned;
  }

  /** The CPUs the lab's processes start on: the lab's share when pinned, else undefined (as they are). */
  private get cpus(): readonly number[] | undefined {
    return this.pinned?.applied ? this.pinned.labCpus : undefined;
  }

  async up(): Promise<void> {
    if (this.apis.some((r) => r.child) || this.ref?.running) return;
    if (!this.holdsPin) {
      this.pinned = acquirePinning(this.cfg.pin);
      this.holdsPin = this.pinned.applied;
    }
    const n = this.apis.length;
    // A fixed port gives replica i port + i; port 0 lets each pick a free one (no clash possible).
    if (this.cfg.apiPort !== 0 && this.cfg.apiPort + n - 1 > 65535)
      throw new BenchError(
        'E_LAB_PREFLIGHT',
        `${n} api replicas on consecutive ports from ${this.cfg.apiPort} would go past port 65535`,
      );
    if (this.cfg.logFile) this.log = createWriteStream(this.cfg.logFile, { flags: 'a' });
    this.deps = {
      ...(this.cfg.cache ? { cache: await this.startDataServices(this.cfg.cache) } : {}),
      ...(this.cfg.llm ? { llm: await this.startLlmStub(this.cfg.llm) } : {}),
    };
    if (this.ref) await this.startRef(this.cfg.apiPort);
    else
      await Promise.all(
        this.apis.map((_, i) => this.spawnApi(i, this.cfg.apiPort === 0 ? 0 : this.cfg.apiPort + i)),
      );
    // The clients' link to each replica, on the port it keeps across restarts.
    if (this.cfg.apiLink)
      await this.startFaultProxy(
        Object.fromEntries(
          this.apis.map((r, i) => [apiLinkProxy(i, n), `${this.cfg.host}:${r.port}`] as const),
        ),
      );
  }

  /** The reference server in the api's place, on the api's port (its first start picks one if 0). */
  private async startRef(port: number): Promise<void> {
    try {
      this.apis[0]!.port = await this.ref!.start(port);
    } finally {
      this.cfg.onProcessesChanged?.();
    }
  }

  /** What the lab log and errors call replica i: `the api` when there is one. */
  private apiName(i: number): string {
    return this.apis.length > 1 ? `api replica ${i}` : 'the api';
  }

  private async spawnApi(i: number, port: number): Promise<void> {
    const r = this.apis[i]!;
    r.port = await startNodeService(apiArgs(this.cfg, port, this.deps, i), {
      tag: this.apis.length > 1 ? `api${i}` : 'api',
      what: this.apiName(i),
      log: this.write,
      cpus: this.cpus,
      spawned: (child) => {
        r.child = child;
        this.cfg.onProcessesChanged?.();
      },
    });
    const res = await request(`${this.urlOf(i)}/health`, { headersTimeout: 5000, bodyTimeout: 5000 });
    await res.body.dump();
    if (res.statusCode !== 200)
      throw new BenchError('E_LAB_PREFLIGHT', `${this.apiName(i)}'s health check answered ${res.statusCode}`);
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
      cpus: this.cpus,
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
      cpus: this.cpus,
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
    this.redis = new RedisServer(this.cfg.host, this.write, this.cpus);
    this.postgres = new PostgresServer(
      this.cfg.host,
      // Every api replica opens its own pool.
      { keys: c.keys, maxConnections: Math.max(20, c.pool * this.apis.length + 10) },
      this.write,
      this.cpus,
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
      retry: c.retry,
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
    try {
      await this.stopAll();
    } finally {
      // Every way out of a run passes here (runBody's finally): the orchestrator gets its CPUs back.
      if (this.holdsPin) {
        this.holdsPin = false;
        releasePinning();
      }
    }
  }

  private async stopAll(): Promise<void> {
    await this.ref?.stop();
    const children = this.apis.flatMap((r) => (r.child ? [r.child] : []));
    for (const r of this.apis) r.child = undefined;
    await Promise.all(children.map((child) => stopChild(child, 'SIGTERM', 3000)));
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

  /** The api replicas a target on the api acts on (all for `api`); an E_LAB error for one the lab does not run. */
  private replicasOf(t: ParsedTarget): number[] {
    try {
      return replicaIndices(t, this.apis.length);
    } catch (err) {
      throw new BenchError('E_LAB', (err as Error).message);
    }
  }

  /** The pid of a component other than the api, running. */
  private pidOf(c: Exclude<Component, 'api'>): number {
    const pid = c === 'redis' ? this.redis?.pid : c === 'postgres' ? this.postgres?.pid : this.llmStub?.pid;
    if (!pid) throw new BenchError('E_LAB', `component "${c}" is not running in this lab`);
    return pid;
  }

  /** The pid of api replica i, running. */
  private apiPid(i: number): number {
    const child = this.apis[i]?.child;
    if (!child?.pid || child.exitCode !== null || child.signalCode !== null)
      throw new BenchError(
        'E_LAB',
        this.apis.length > 1
          ? `api replica ${i} is not running in this lab`
          : `component "api" is not running in this lab`,
      );
    return child.pid;
  }

  /** Api replica i or the llm stub: node children of this lab, restarted on their old port. */
  private nodeChild(c: 'api' | 'llm', i = 0): ChildProcess {
    const child = c === 'api' ? this.apis[i]?.child : this.llmStub;
    if (!child) throw new BenchError('E_LAB', `component "${c}" is not running in this lab`);
    return child;
  }

  async kill(t: Target): Promise<void> {
    if (this.ref && targetOf(t).component === 'api') return this.haltRef(t, () => this.ref!.kill());
    await this.halt(t, 'SIGKILL', 0, () => 'SIGKILL');
  }

  async stop(t: Target): Promise<void> {
    if (this.ref && targetOf(t).component === 'api') return this.haltRef(t, () => this.ref!.stop());
    // Postgres's fast shutdown is SIGINT; Redis and the node services stop on SIGTERM.
    await this.halt(t, 'SIGTERM', 5000, (c) => (c === 'postgres' ? 'SIGINT' : 'SIGTERM'));
  }

  /** Kills or stops the reference server (every process of it), which is then not paused either. */
  private async haltRef(t: Target, how: () => Promise<void>): Promise<void> {
    // `api` or `api[0]`: the one instance it runs (another replica index is an error).
    this.replicasOf(targetOf(t));
    this.paused.forget('api[0]');
    await how();
    this.cfg.onProcessesChanged?.();
  }

  /** Stops what `t` names: node children (each api replica, the stub) with `signal` and `graceMs`, a data service with its own signal. */
  private async halt(
    t: Target,
    signal: NodeJS.Signals,
    graceMs: number,
    dataSignal: (c: 'redis' | 'postgres') => NodeJS.Signals,
  ): Promise<void> {
    const p = targetOf(t);
    if (p.component === 'api')
      await Promise.all(
        this.replicasOf(p).map((i) => {
          this.paused.forget(`api[${i}]`);
          return stopChild(this.nodeChild('api', i), signal, graceMs);
        }),
      );
    else {
      const c = p.component;
      this.paused.forget(c);
      if (c === 'llm') await stopChild(this.nodeChild(c), signal, graceMs);
      else await this.dataService(c).halt(dataSignal(c));
    }
  }

  async start(t: Target): Promise<void> {
    const p = targetOf(t);
    const c = p.component;
    if (c === 'api' && this.ref) {
      this.replicasOf(p);
      await this.startRef(this.apis[0]!.port);
    } else if (c === 'api') {
      await Promise.all(
        this.replicasOf(p).map(async (i) => {
          const child = this.nodeChild('api', i);
          if (child.exitCode === null && child.signalCode === null) return;
          await this.spawnApi(i, this.apis[i]!.port);
        }),
      );
    } else if (c === 'llm') {
      const child = this.nodeChild(c);
      if (child.exitCode === null && child.signalCode === null) return;
      await this.spawnLlmStub(this.cfg.llm!, this.llmPort);
    } else {
      await this.dataService(c).start();
      this.cfg.onProcessesChanged?.();
    }
  }

  teardownRecipe(): UndoRecipe {
    // A reference server is a tree of processes (guard, master, workers): every one of them.
    const trees = this.ref?.running ? this.ref.tree() : [];
    return teardownRecipe(this.processes(), this.postgres?.dataDir, trees);
  }

  /** Locally a killed component dies with the lab, which `lab reset` stops: nothing to start. */
  startUndoRecipe(t: Target): UndoRecipe {
    return { kind: 'none', what: `start ${t} again (the local lab is stopped instead)` };
  }

  private dataService(c: Component): RedisServer | PostgresServer {
    const d = c === 'redis' ? this.redis : c === 'postgres' ? this.postgres : undefined;
    if (!d) throw new BenchError('E_LAB', `component "${c}" is not running in this lab`);
    return d;
  }

  /**
   * The processes a pause freezes: an api replica, redis and the llm stub are one process
   * each; Postgres is the postmaster and its backends (like `docker pause`, which freezes
   * the whole cgroup).
   */
  private pauseTargets(c: Exclude<Component, 'api'>): number[] {
    const pid = this.pidOf(c);
    return c === 'postgres' ? processTree(pid) : [pid];
  }

  /** Each api replica is frozen and continued on its own (`api[i]`), whether the trigger named it or all. */
  async pause(t: Target): Promise<void> {
    const p = targetOf(t);
    if (p.component === 'api' && this.ref) {
      this.replicasOf(p);
      const root = this.ref.rootPid;
      if (root === undefined) throw new BenchError('E_LAB', 'component "api" is not running in this lab');
      this.paused.pause('api[0]', root, () => this.ref!.tree());
    } else if (p.component === 'api')
      for (const i of this.replicasOf(p)) {
        const pid = this.apiPid(i);
        this.paused.pause(`api[${i}]`, pid, () => [pid]);
      }
    else {
      const c = p.component;
      this.paused.pause(c, this.pidOf(c), () => this.pauseTargets(c));
    }
  }

  async resume(t: Target): Promise<void> {
    const p = targetOf(t);
    if (p.component === 'api') for (const i of this.replicasOf(p)) this.paused.resume(`api[${i}]`);
    else this.paused.resume(p.component);
  }

  /** The process trees a CPU quota on `t` covers: each named api replica's (or the reference server's), or the component's. */
  private cpuTrees(t: Target): { name: string; pids: number[] }[] {
    const p = targetOf(t);
    if (p.component === 'api' && this.ref) {
      this.replicasOf(p);
      return [{ name: 'api', pids: this.ref.tree() }];
    }
    if (p.component === 'api')
      return this.replicasOf(p).map((i) => ({ name: `api-${i}`, pids: processTree(this.apiPid(i)) }));
    return [{ name: p.component, pids: processTree(this.pidOf(p.component)) }];
  }

  private cgroups() {
    const c = cpuCgroups();
    if ('refused' in c) throw new BenchError('E_LAB', `cpu-limit: ${c.refused}`);
    return c;
  }

  /** A real CPU quota (cpu-limit): the component's tree in a cgroup of its own (cpuQuota.ts). */
  async limitCpu(t: Target, cpus: number): Promise<void> {
    const c = this.cgroups();
    for (const { name, pids } of this.cpuTrees(t)) {
      const back = cgroupDirOf(c, pids[0]!);
      const dir = quotaDir(c, name, pids[0]!);
      this.cpuQuotas.set(dir, back);
      limitCpu(c, dir, pids, cpus);
    }
  }

  async unlimitCpu(t: Target): Promise<void> {
    const c = this.cgroups();
    for (const { name, pids } of this.cpuTrees(t)) {
      const dir = quotaDir(c, name, pids[0]!);
      const back = this.cpuQuotas.get(dir);
      if (back === undefined) continue;
      unlimitCpu(c, dir, back);
      this.cpuQuotas.delete(dir);
    }
  }

  cpuLimitUndoRecipe(t: Target): UndoRecipe {
    const c = this.cgroups();
    const steps = this.cpuTrees(t).map(({ name, pids }) =>
      unlimitRecipe(c, quotaDir(c, name, pids[0]!), pids, `lift the CPU quota on ${name}`),
    );
    return steps.length === 1 ? steps[0]! : { kind: 'steps', steps, what: `lift the CPU quota on ${t}` };
  }

  /** Continues exactly the processes pause(t) freezes: each replica it names, or the component's tree. */
  pauseUndoRecipe(t: Target): UndoRecipe {
    const p = targetOf(t);
    if (p.component === 'api' && this.ref) return resumeRecipe(t, this.ref.tree());
    return resumeRecipe(
      t,
      p.component === 'api' ? this.replicasOf(p).map((i) => this.apiPid(i)) : this.pauseTargets(p.component),
    );
  }

  scrapeText(t: Target, timeoutMs: number): Promise<string> {
    // The reference server's series in the bench's names (referenceMetrics.ts and its /metrics).
    if (this.ref && targetOf(t).component === 'api') return this.ref.scrapeText(timeoutMs);
    return scrapeLabText(this, t, timeoutMs);
  }

  processes(): readonly LabProcess[] {
    const out: LabProcess[] = [];
    const several = this.apis.length > 1;
    const root = this.ref?.rootPid;
    if (this.ref && root !== undefined)
      out.push({ component: 'api', pid: root, command: `${this.cfg.server!.kind} (reference server)` });
    this.apis.forEach((r, i) => {
      if (r.child?.pid)
        out.push({
          component: 'api',
          pid: r.child.pid,
          command: 'node services/api/main.js',
          ...(several ? { replica: i } : {}),
        });
    });
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
      apiPid: this.ref ? this.ref.rootPid : this.apis[0]!.child?.pid,
      ...(this.apis.length > 1
        ? { replicas: this.apis.map((r, i) => ({ url: this.urlOf(i), pid: r.child?.pid ?? null })) }
        : {}),
      redis: this.redis,
      postgres: this.postgres,
      llm: this.llmStub ? { pid: this.llmStub.pid, port: this.llmPort } : undefined,
      links: this.linkAddrs,
      faultProxyApi: this.faultProxyApi,
    });
  }
}
