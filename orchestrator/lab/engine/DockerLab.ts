import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Docker from 'dockerode';
import { Redis } from 'ioredis';
import pg from 'pg';
import { formatDurationDist } from '../../../services/api/config.js';
import { BenchError } from '../../../foundation/errors.js';
import type { Lab, LabProcess, LabTopology, Target, UndoRecipe } from '../Lab.js';
import { replicaSeed } from '../labConfig.js';
import { LinkClient } from '../links.js';
import { dockerApiFlags, flagsString, LINK_ADDRESSES, type ApiLabConfig } from './apiFlags.js';
import { CORE_SERVICES, COMPOSE_FILE, runCompose, type ComposeOptions } from './compose.js';
import {
  dockerClient,
  engineAddress,
  inspectContainer,
  pingEngine,
  projectContainers,
  waitHealthy,
  type EngineAddress,
  type ServiceContainer,
} from './engine.js';
import {
  apiPortBase,
  apiService,
  readApiService,
  replicaOfService,
  replicaOverride,
  servicesOf,
  undoRecipe,
} from './replicas.js';
import type { DockerUndo } from './undo.js';
import { scrapeLabText } from '../scrapeApi.js';
import type { NetemSpec } from '../netem.js';
import { addNetem, removeNetem } from './netemHost.js';
import { apiLinkContainerPort, apiLinkOverride, apiLinkSpecs, apiServiceUpstream } from './apiLinkPorts.js';

export interface DockerLabConfig extends ApiLabConfig {
  readonly compose: ComposeOptions;
  /** Where the lab's own notes go (the run's lab.log). */
  readonly logFile?: string;
}

/**
 * The lab as the compose project's containers, driven through the Docker Engine API
 * (dockerode): pause is `docker pause` (a frozen cgroup), kill is SIGKILL (the restart
 * policy leaves a container the API killed or stopped down: the engine marks it manually
 * stopped), network faults go to Toxiproxy's API. `up` brings the project's core
 * services up with this experiment's api flags (compose recreates the api when they
 * change), reseeds Postgres and refills Redis through their published ports; `down`
 * undoes what the run did to the containers and leaves the lab running for the next run
 * and for Grafana (`metabench lab down` removes it). With lab.api.replicas each replica is
 * its own container (services `api`, `api1`…: replicas.ts), paused, killed, stopped and
 * started on its own; the sets below hold compose service names.
 */
export class DockerLab implements Lab {
  readonly runtime: 'docker' | 'swarm' = 'docker';
  protected readonly docker: Docker;
  protected readonly engine: EngineAddress;
  protected readonly containers = new Map<string, ServiceContainer>();
  private readonly paused = new Set<string>();
  private readonly halted = new Set<string>();
  protected readonly replicas: number;
  private versions: { redis?: string; postgres?: string } = {};
  /** Redis's and Postgres's passwords where the lab sets them (swarm: its secrets); none on docker. */
  protected credentials: { redis?: string; postgres?: string } = {};
  faultProxyApi: string | undefined;

  constructor(protected readonly cfg: DockerLabConfig) {
    this.engine = engineAddress();
    this.docker = dockerClient(this.engine);
    this.replicas = cfg.replicas ?? 1;
  }

  get apiUrl(): string {
    return `http://${this.published('api', '8080/tcp')}`;
  }

  /** Each api replica's published address, by replica index. */
  get apiUrls(): readonly string[] {
    return this.apiServices().map((s) => `http://${this.published(s, '8080/tcp')}`);
  }

  /**
   * Through the api link (apiLinkPorts.ts) when the run uses it: each replica's link as the
   * toxiproxy container publishes it; undefined before up() (the engine picks those ports).
   */
  get clientUrls(): readonly string[] | undefined {
    if (!this.cfg.apiLink) return undefined;
    const ports = this.containers.get('toxiproxy')?.ports;
    const via = this.apiServices().map((_, i) => ports?.[apiLinkContainerPort(i)]);
    return via.every((a) => a !== undefined) ? via.map((a) => `http://${a}`) : undefined;
  }

  /** Where the api link of replica `i` dials it from the fault proxy's container: its service on the compose network. */
  protected apiLinkUpstream(i: number): string {
    return apiServiceUpstream(i);
  }

  /** The compose services of the api replicas, by replica index. */
  protected apiServices(): string[] {
    return Array.from({ length: this.replicas }, (_, i) => apiService(i));
  }

  /** The stub provider's published address, when the project runs it (`--profile llm`). */
  get llmUrl(): string | undefined {
    const addr = this.containers.get('llm-stub')?.ports['8000/tcp'];
    return addr ? `http://${addr}` : undefined;
  }

  protected note(line: string): void {
    if (this.cfg.logFile) appendFileSync(this.cfg.logFile, `[${this.runtime}] ${line}\n`);
  }

  async up(): Promise<void> {
    await pingEngine(this.docker);
    // Each replica's flags differ only in its seed (replica 0 keeps the lab's: one api runs as before).
    const flagsOf = (i: number): string =>
      flagsString(dockerApiFlags({ ...this.cfg, seed: replicaSeed(this.cfg.seed, i) }));
    const env = { METABENCH_API_FLAGS: flagsOf(0) };
    this.note(`compose up (api flags: ${env.METABENCH_API_FLAGS})`);
    const { compose, cleanup } = this.labCompose(flagsOf);
    try {
      await runCompose(compose, ['up', '-d', ...CORE_SERVICES.filter((s) => s !== 'api')], { env });
      // A fresh api for every run, as the local lab has: no queue or counters carried over.
      await runCompose(compose, ['up', '-d', '--no-deps', '--force-recreate', ...this.apiServices()], {
        env,
      });
    } finally {
      cleanup();
    }
    await this.refresh();
    await this.removeExtraReplicas();
    for (const s of [...CORE_SERVICES.filter((s) => s !== 'api'), ...this.apiServices()]) {
      const c = this.containers.get(s);
      if (!c)
        throw new BenchError('E_LAB_PREFLIGHT', `compose project "${this.cfg.compose.project}" has no ${s}`);
      this.containers.set(s, await waitHealthy(this.docker, c.id));
    }
    await this.prepare();
  }

  /** Once every service is healthy: Toxiproxy's links from a clean slate, then the data the experiment reads. */
  protected async prepare(): Promise<void> {
    this.faultProxyApi = `http://${this.published('toxiproxy', '8474/tcp')}`;
    const links = new LinkClient(this.faultProxyApi);
    await links.reset(); // no toxic left from an earlier run, every link enabled
    for (const [name, upstream] of Object.entries({ redis: 'redis:6379', postgres: 'postgres:5432' }))
      await links.ensureLink({
        name,
        listen: `0.0.0.0:${LINK_ADDRESSES[name as 'redis'].split(':')[1]}`,
        upstream,
      });
    // The clients' link to each replica, on the port the override published (only a run that uses it).
    if (this.cfg.apiLink)
      for (const l of apiLinkSpecs(this.replicas, (i) => this.apiLinkUpstream(i))) await links.ensureLink(l);
    if (this.cfg.cache) await this.seed(this.cfg.cache);
  }

  /**
   * The compose options of this lab: the project's own alone with one api and no api link;
   * else with a generated override (in a temporary file, removed by `cleanup` once compose
   * has read it: the lab drives the containers through the engine) that adds replicas 1…
   * and, for a run through the api link, publishes toxiproxy's links to the replicas.
   */
  private labCompose(flagsOf: (i: number) => string): { compose: ComposeOptions; cleanup: () => void } {
    const c = this.cfg.compose;
    const replicas =
      this.replicas > 1
        ? replicaOverride(
            readApiService(c.file ?? COMPOSE_FILE),
            this.replicas,
            apiPortBase(process.env, c.envFile),
            flagsOf,
          )?.services
        : undefined;
    const services = { ...replicas, ...(this.cfg.apiLink ? apiLinkOverride(this.replicas) : {}) };
    // One api and no link: the compose file alone, not even read here.
    if (Object.keys(services).length === 0) return { compose: c, cleanup: () => undefined };
    const dir = mkdtempSync(join(tmpdir(), 'metabench-override-'));
    const file = join(dir, 'lab-override.json');
    writeFileSync(file, `${JSON.stringify({ services }, null, 2)}\n`);
    if (replicas)
      this.note(
        `api replicas 1 to ${this.replicas - 1}: ${Object.keys(replicas).join(', ')} (override ${file})`,
      );
    if (this.cfg.apiLink)
      this.note(`the clients' link to the api: toxiproxy publishes one port per replica (override ${file})`);
    return {
      compose: { ...c, overrides: [...(c.overrides ?? []), file] },
      cleanup: () => rmSync(dir, { recursive: true, force: true }),
    };
  }

  /** Removes replica containers an earlier run with more replicas left (they would serve nobody and take CPU). */
  private async removeExtraReplicas(): Promise<void> {
    for (const [service, c] of [...this.containers]) {
      const i = replicaOfService(service);
      if (i === undefined || i < this.replicas) continue;
      await this.docker.getContainer(c.id).remove({ force: true });
      this.containers.delete(service);
      this.note(`removed ${c.name} (api replica ${i}, beyond lab.api.replicas ${this.replicas})`);
    }
  }

  /** The `items` table with the experiment's keys (as the local lab seeds it), then an empty or pre-warmed cache. */
  private async seed(c: NonNullable<ApiLabConfig['cache']>): Promise<void> {
    const rows = await this.withDb(async (db) => {
      this.versions.postgres = (
        (await db.query('SHOW server_version')).rows[0] as { server_version: string }
      ).server_version;
      await db.query('DROP TABLE IF EXISTS items');
      await db.query('CREATE TABLE items (id integer PRIMARY KEY, value text NOT NULL)');
      await db.query('INSERT INTO items SELECT g, md5(g::text) FROM generate_series(0, $1::integer) g', [
        c.keys,
      ]);
      await db.query('ANALYZE items');
      return c.prewarm
        ? ((await db.query('SELECT id, value FROM items')).rows as { id: number; value: string }[])
        : [];
    });
    const r = this.redis();
    try {
      await r.connect();
      this.versions.redis = /redis_version:(\S+)/.exec(await r.info('server'))?.[1] ?? 'unknown';
      await r.flushall();
      for (let i = 0; i < rows.length; i += 1000) {
        const p = r.pipeline();
        for (const row of rows.slice(i, i + 1000)) p.set(`item:${row.id}`, row.value, 'EX', c.ttlS);
        await p.exec();
      }
    } finally {
      r.disconnect();
    }
  }

  private async withDb<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
    const [host, port] = this.published('postgres', '5432/tcp').split(':');
    const c = new pg.Client({
      host,
      port: Number(port),
      user: 'postgres',
      database: 'postgres',
      ...(this.credentials.postgres !== undefined ? { password: this.credentials.postgres } : {}),
      connectionTimeoutMillis: 5000,
    });
    c.on('error', () => undefined);
    await c.connect();
    try {
      return await fn(c);
    } finally {
      await c.end().catch(() => undefined);
    }
  }

  private redis(): Redis {
    const [host, port] = this.published('redis', '6379/tcp').split(':');
    const r = new Redis({
      host: host!,
      port: Number(port),
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      connectTimeout: 5000,
      ...(this.credentials.redis !== undefined ? { password: this.credentials.redis } : {}),
    });
    r.on('error', () => undefined);
    return r;
  }

  /** Re-reads the project's containers (their ids, states, pids and published ports). */
  private async refresh(): Promise<void> {
    this.containers.clear();
    for (const c of await projectContainers(this.docker, this.cfg.compose.project))
      this.containers.set(c.service, c);
  }

  protected published(service: string, port: string): string {
    const addr = this.containers.get(service)?.ports[port];
    if (!addr)
      throw new BenchError(
        'E_LAB',
        `${service} of ${this.runtime === 'swarm' ? 'stack' : 'compose project'} "${this.cfg.compose.project}" publishes no ${port}`,
      );
    return addr;
  }

  /** The container of a compose service of this lab. */
  protected container(service: string): ServiceContainer {
    const found = this.containers.get(service);
    if (!found) throw new BenchError('E_LAB', `${service} is not running in this lab`);
    return found;
  }

  /** The compose services a target acts on (each api replica for `api`, one for `api[i]`). */
  private servicesOf(t: Target): string[] {
    return servicesOf(t, this.replicas);
  }

  async down(): Promise<void> {
    // Leave the lab as the run found it: nothing paused, nothing stopped.
    for (const s of [...this.paused]) await this.resumeService(s).catch(() => undefined);
    for (const s of [...this.halted]) await this.startService(s).catch(() => undefined);
  }

  /** Every service a target names at once (a pause of `api` freezes its replicas together). */
  private async each(t: Target, act: (service: string) => Promise<void>): Promise<void> {
    await Promise.all(this.servicesOf(t).map(act));
  }

  async pause(t: Target): Promise<void> {
    await this.each(t, async (s) => {
      await this.dockerOf(s).getContainer(this.container(s).id).pause();
      this.paused.add(s);
      this.note(`paused ${s}`);
    });
  }

  async resume(t: Target): Promise<void> {
    await this.each(t, (s) => this.resumeService(s));
  }

  private async resumeService(service: string): Promise<void> {
    if (!this.paused.has(service)) return;
    this.paused.delete(service);
    const docker = this.dockerOf(service);
    const s = await inspectContainer(docker, this.container(service).id);
    if (s.state === 'paused') await docker.getContainer(s.id).unpause();
    this.note(`resumed ${service}`);
  }

  pauseUndoRecipe(t: Target): UndoRecipe {
    return this.recipe(t, 'unpause');
  }

  /**
   * A real CPU quota (cpu-limit): `docker update --cpus` on each container `t` names (the
   * engine's CFS quota). On swarm it is the running task's container that is capped, not the
   * service's spec: changing the spec would replace the task, a restart rather than a quota.
   */
  async limitCpu(t: Target, cpus: number): Promise<void> {
    await this.each(t, async (s) => {
      await this.dockerOf(s)
        .getContainer(this.container(s).id)
        .update({ NanoCpus: Math.round(cpus * 1e9) });
      this.note(`limited ${s} to ${cpus} CPU`);
    });
  }

  async unlimitCpu(t: Target): Promise<void> {
    await this.each(t, async (s) => {
      // The Engine cannot reset a quota (NanoCpus 0 changes nothing): every core limits nothing.
      const docker = this.dockerOf(s);
      const { NCPU } = (await docker.info()) as { NCPU: number };
      await docker.getContainer(this.container(s).id).update({ NanoCpus: NCPU * 1e9 });
      this.note(`lifted the CPU quota on ${s}`);
    });
  }

  cpuLimitUndoRecipe(t: Target): UndoRecipe {
    return undoRecipe(
      t,
      'uncap',
      this.replicas,
      (s) => this.container(s),
      (s) => this.engineOf(s),
    );
  }

  /** A netem qdisc on each container `t` names (netemHost.ts: from this host, in its network namespace). */
  async netem(t: Target, spec: NetemSpec): Promise<void> {
    await this.each(t, async (s) => {
      addNetem(this.container(s), spec);
      this.note(`netem on ${s}`);
    });
  }

  async unnetem(t: Target): Promise<void> {
    await this.each(t, async (s) => {
      this.note(removeNetem(this.container(s)));
    });
  }

  netemUndoRecipe(t: Target): UndoRecipe {
    return this.recipe(t, 'netem-del');
  }

  async kill(t: Target): Promise<void> {
    await this.each(t, async (s) => {
      this.paused.delete(s);
      this.halted.add(s);
      await this.dockerOf(s).getContainer(this.container(s).id).kill({ signal: 'SIGKILL' });
      this.note(`killed ${s}`);
    });
  }

  async stop(t: Target): Promise<void> {
    await this.each(t, async (s) => {
      this.paused.delete(s);
      this.halted.add(s);
      await this.dockerOf(s).getContainer(this.container(s).id).stop({ t: 10 });
      this.note(`stopped ${s}`);
    });
  }

  /** Starts each container `t` names and waits until each is healthy (every replica on its own). */
  async start(t: Target): Promise<void> {
    await this.each(t, (s) => this.startService(s));
  }

  private async startService(service: string): Promise<void> {
    const id = this.container(service).id;
    const docker = this.dockerOf(service);
    const s = await inspectContainer(docker, id);
    if (s.state !== 'running' && s.state !== 'paused') await docker.getContainer(id).start();
    this.containers.set(service, await this.healthy(service, id));
    this.halted.delete(service);
    this.note(`started ${service}`);
  }

  /** The compose project outlives a run (`metabench lab down` stops it): nothing to tear down. */
  teardownRecipe(): UndoRecipe {
    return { kind: 'none', what: 'the docker lab (it stays up until metabench lab down)' };
  }

  startUndoRecipe(t: Target): UndoRecipe {
    return this.recipe(t, 'start');
  }

  /** The undo of `action` on `t`'s containers (replicas.ts: one recipe per container). */
  private recipe(t: Target, action: DockerUndo['action']): UndoRecipe {
    return undoRecipe(
      t,
      action,
      this.replicas,
      (s) => this.container(s),
      (s) => this.engineOf(s),
    );
  }

  /** The engine that runs a service's container: the one engine of a compose project (swarm: its task's node's). */
  protected engineOf(_service: string): EngineAddress {
    return this.engine;
  }

  protected dockerOf(_service: string): Docker {
    return this.docker;
  }

  /** The service's container once it runs and is healthy, as this lab sees it (its published addresses). */
  protected healthy(service: string, id: string): Promise<ServiceContainer> {
    return waitHealthy(this.dockerOf(service), id);
  }

  async flushCache(): Promise<void> {
    if (!this.cfg.cache) throw new BenchError('E_LAB', 'this lab has no cache to flush');
    const r = this.redis();
    try {
      await r.connect();
      await r.flushall();
    } finally {
      r.disconnect();
    }
  }

  scrapeText(t: Target, timeoutMs: number): Promise<string> {
    return scrapeLabText(this, t, timeoutMs);
  }

  /** The containers' main processes as the host sees them (/proc), when the engine runs on this kernel. */
  processes(): readonly LabProcess[] {
    const out: LabProcess[] = [];
    const several = this.replicas > 1;
    for (const [component, service, replica] of [
      ...this.apiServices().map((s, i) => ['api', s, several ? i : undefined] as const),
      ['redis', 'redis', undefined],
      ['postgres', 'postgres', undefined],
      ['faultproxy', 'toxiproxy', undefined],
    ] as const) {
      const c = this.containers.get(service);
      if (c && c.pid > 0 && !this.halted.has(service) && isHostProcessOf(c.pid, c.id))
        out.push({
          component,
          pid: c.pid,
          command: `container ${c.name} (${c.image})`,
          ...(replica !== undefined ? { replica } : {}),
        });
    }
    return out;
  }

  /** The fault proxy's links: the clients' to each api replica (a run through the api link), the api's to its dependencies (a cache lab). */
  private linkTopology(): NonNullable<LabTopology['links']> {
    const api = this.faultProxyApi;
    if (!api) return [];
    const published = this.containers.get('toxiproxy')?.ports ?? {};
    return [
      ...(this.cfg.apiLink
        ? apiLinkSpecs(this.replicas, (i) => this.apiLinkUpstream(i)).map(({ name, upstream }, i) => ({
            from: 'client',
            to: 'api' as const,
            address: published[apiLinkContainerPort(i)] ?? '',
            proxy: { name, upstream, api },
          }))
        : []),
      ...(this.cfg.cache
        ? (['redis', 'postgres'] as const).map((to) => ({
            from: 'api' as const,
            to,
            address: LINK_ADDRESSES[to],
            proxy: { name: to, upstream: `${to}:${to === 'redis' ? 6379 : 5432}`, api },
          }))
        : []),
    ];
  }

  topology(): LabTopology {
    const url = (service: string, port: string, scheme: string): string => {
      const addr = this.containers.get(service)?.ports[port];
      return addr ? `${scheme}://${addr}` : '';
    };
    const image = (service: string): Record<string, unknown> => {
      const c = this.containers.get(service);
      return c ? { container: c.name, image: c.image } : {};
    };
    const cache = this.cfg.cache;
    const links = this.linkTopology();
    return {
      runtime: this.runtime,
      components: [
        {
          name: 'api',
          url: url('api', '8080/tcp', 'http'),
          pid: null,
          ...(this.replicas > 1
            ? { replicas: this.apiServices().map((s) => ({ url: url(s, '8080/tcp', 'http'), pid: null })) }
            : {}),
          config: {
            ...image('api'),
            ...(this.replicas > 1
              ? {
                  replicas: this.replicas,
                  containers: this.apiServices().map((s) => this.containers.get(s)?.name ?? ''),
                }
              : {}),
            project: this.cfg.compose.project,
            workers: this.cfg.workers,
            work: formatDurationDist(this.cfg.work),
            queue: this.cfg.mitigations?.queue ?? 'fifo',
            mitigations: this.cfg.mitigations ?? {},
            seed: this.cfg.seed,
            flags: dockerApiFlags(this.cfg),
          },
        },
        ...(cache
          ? [
              {
                name: 'redis' as const,
                url: url('redis', '6379/tcp', 'redis'),
                pid: null,
                ...(this.versions.redis ? { version: this.versions.redis } : {}),
                config: { ...image('redis'), ttlS: cache.ttlS, prewarm: cache.prewarm, persistence: 'none' },
              },
              {
                name: 'postgres' as const,
                url: url('postgres', '5432/tcp', 'postgres'),
                pid: null,
                ...(this.versions.postgres ? { version: this.versions.postgres } : {}),
                config: {
                  ...image('postgres'),
                  keys: cache.keys,
                  pool: cache.pool,
                  queryDelay: formatDurationDist(cache.queryDelay),
                  fsync: false,
                },
              },
            ]
          : []),
      ],
      ...(links.length > 0 ? { links } : {}),
    };
  }
}

/**
 * True when `pid` is, on this host's /proc, a process of container `id` (its cgroup names
 * the container). A remote engine, a VM (Docker Desktop) or another pid namespace gives
 * pids that mean nothing here, or something else: those are left out.
 */
function isHostProcessOf(pid: number, id: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/cgroup`, 'utf8').includes(id);
  } catch {
    return false;
  }
}
