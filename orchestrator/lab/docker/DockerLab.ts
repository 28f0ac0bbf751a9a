import { appendFileSync, readFileSync } from 'node:fs';
import type Docker from 'dockerode';
import { Redis } from 'ioredis';
import pg from 'pg';
import { formatDurationDist } from '../../../services/api/config.js';
import { BenchError } from '../../../foundation/errors.js';
import type { Component, Lab, LabProcess, LabTopology, Target, UndoRecipe } from '../Lab.js';
import { targetOf } from '../target.js';
import { LinkClient } from '../links.js';
import { dockerApiFlags, flagsString, LINK_ADDRESSES, type ApiLabConfig } from './apiFlags.js';
import { CORE_SERVICES, runCompose, type ComposeOptions } from './compose.js';
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
import type { DockerUndo } from './undo.js';
import { scrapeLabText } from '../scrapeApi.js';

export interface DockerLabConfig extends ApiLabConfig {
  readonly compose: ComposeOptions;
  /** Where the lab's own notes go (the run's lab.log). */
  readonly logFile?: string;
}

/** The component a target names in a lab of one api (`api[0]` is that api). */
function oneApi(t: Target): Component {
  const { component, replica } = targetOf(t);
  if (replica !== undefined && replica > 0)
    throw new BenchError('E_LAB', `the docker lab runs one api replica: there is no ${t}`);
  return component;
}

/** The compose service of each component. */
const SERVICE: Record<Component, string> = {
  api: 'api',
  redis: 'redis',
  postgres: 'postgres',
  llm: 'llm-stub',
};

/**
 * The lab as the compose project's containers, driven through the Docker Engine API
 * (dockerode): pause is `docker pause` (a frozen cgroup), kill is SIGKILL (the restart
 * policy leaves a container the API killed or stopped down: the engine marks it manually
 * stopped), network faults go to Toxiproxy's API. `up` brings the project's core
 * services up with this experiment's api flags (compose recreates the api when they
 * change), reseeds Postgres and refills Redis through their published ports; `down`
 * undoes what the run did to the containers and leaves the lab running for the next run
 * and for Grafana (`metabench lab down` removes it).
 */
export class DockerLab implements Lab {
  readonly runtime = 'docker' as const;
  private readonly docker: Docker;
  private readonly engine: EngineAddress;
  private readonly containers = new Map<string, ServiceContainer>();
  private readonly paused = new Set<Component>();
  private readonly halted = new Set<Component>();
  private versions: { redis?: string; postgres?: string } = {};
  faultProxyApi: string | undefined;

  constructor(private readonly cfg: DockerLabConfig) {
    this.engine = engineAddress();
    this.docker = dockerClient(this.engine);
  }

  get apiUrl(): string {
    return `http://${this.published('api', '8080/tcp')}`;
  }

  /** One api: the docker lab runs no replicas yet (its plugin refuses lab.api.replicas above 1). */
  get apiUrls(): readonly string[] {
    return [this.apiUrl];
  }

  /** The stub provider's published address, when the project runs it (`--profile llm`). */
  get llmUrl(): string | undefined {
    const addr = this.containers.get(SERVICE.llm)?.ports['8000/tcp'];
    return addr ? `http://${addr}` : undefined;
  }

  private note(line: string): void {
    if (this.cfg.logFile) appendFileSync(this.cfg.logFile, `[docker] ${line}\n`);
  }

  async up(): Promise<void> {
    await pingEngine(this.docker);
    const env = { METABENCH_API_FLAGS: flagsString(dockerApiFlags(this.cfg)) };
    this.note(`compose up (api flags: ${env.METABENCH_API_FLAGS})`);
    await runCompose(this.cfg.compose, ['up', '-d', ...CORE_SERVICES.filter((s) => s !== 'api')], { env });
    // A fresh api for every run, as the local lab has: no queue or counters carried over.
    await runCompose(this.cfg.compose, ['up', '-d', '--no-deps', '--force-recreate', 'api'], { env });
    await this.refresh();
    for (const s of CORE_SERVICES) {
      const c = this.containers.get(s);
      if (!c)
        throw new BenchError('E_LAB_PREFLIGHT', `compose project "${this.cfg.compose.project}" has no ${s}`);
      this.containers.set(s, await waitHealthy(this.docker, c.id));
    }
    this.faultProxyApi = `http://${this.published('toxiproxy', '8474/tcp')}`;
    const links = new LinkClient(this.faultProxyApi);
    await links.reset(); // no toxic left from an earlier run, every link enabled
    for (const [name, upstream] of Object.entries({ redis: 'redis:6379', postgres: 'postgres:5432' }))
      await links.ensureLink({
        name,
        listen: `0.0.0.0:${LINK_ADDRESSES[name as 'redis'].split(':')[1]}`,
        upstream,
      });
    if (this.cfg.cache) await this.seed(this.cfg.cache);
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

  private published(service: string, port: string): string {
    const addr = this.containers.get(service)?.ports[port];
    if (!addr)
      throw new BenchError(
        'E_LAB',
        `${service} of compose project "${this.cfg.compose.project}" publishes no ${port}`,
      );
    return addr;
  }

  private container(c: Component): ServiceContainer {
    const found = this.containers.get(SERVICE[c]);
    if (!found) throw new BenchError('E_LAB', `component "${c}" is not running in this lab`);
    return found;
  }

  async down(): Promise<void> {
    // Leave the lab as the run found it: nothing paused, nothing stopped.
    for (const c of [...this.paused]) await this.resume(c).catch(() => undefined);
    for (const c of [...this.halted]) await this.start(c).catch(() => undefined);
  }

  async pause(t: Target): Promise<void> {
    const c = oneApi(t);
    await this.docker.getContainer(this.container(c).id).pause();
    this.paused.add(c);
    this.note(`paused ${SERVICE[c]}`);
  }

  async resume(t: Target): Promise<void> {
    const c = oneApi(t);
    if (!this.paused.has(c)) return;
    this.paused.delete(c);
    const s = await inspectContainer(this.docker, this.container(c).id);
    if (s.state === 'paused') await this.docker.getContainer(s.id).unpause();
    this.note(`resumed ${SERVICE[c]}`);
  }

  pauseUndoRecipe(t: Target): UndoRecipe {
    const c = oneApi(t);
    return this.recipe(c, 'unpause', `resume ${c} (docker unpause ${this.container(c).name})`);
  }

  async kill(t: Target): Promise<void> {
    const c = oneApi(t);
    this.paused.delete(c);
    this.halted.add(c);
    await this.docker.getContainer(this.container(c).id).kill({ signal: 'SIGKILL' });
    this.note(`killed ${SERVICE[c]}`);
  }

  async stop(t: Target): Promise<void> {
    const c = oneApi(t);
    this.paused.delete(c);
    this.halted.add(c);
    await this.docker.getContainer(this.container(c).id).stop({ t: 10 });
    this.note(`stopped ${SERVICE[c]}`);
  }

  async start(t: Target): Promise<void> {
    const c = oneApi(t);
    const id = this.container(c).id;
    const s = await inspectContainer(this.docker, id);
    if (s.state !== 'running' && s.state !== 'paused') await this.docker.getContainer(id).start();
    this.containers.set(SERVICE[c], await waitHealthy(this.docker, id));
    this.halted.delete(c);
    this.note(`started ${SERVICE[c]}`);
  }

  /** The compose project outlives a run (`metabench lab down` stops it): nothing to tear down. */
  teardownRecipe(): UndoRecipe {
    return { kind: 'none', what: 'the docker lab (it stays up until metabench lab down)' };
  }

  startUndoRecipe(t: Target): UndoRecipe {
    const c = oneApi(t);
    return this.recipe(c, 'start', `start ${c} again (docker start ${this.container(c).name})`);
  }

  private recipe(c: Component, action: DockerUndo['action'], what: string): DockerUndo {
    return { kind: 'docker', action, container: this.container(c).id, engine: this.engine, what };
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
    for (const [component, service] of [
      ['api', 'api'],
      ['redis', 'redis'],
      ['postgres', 'postgres'],
      ['faultproxy', 'toxiproxy'],
    ] as const) {
      const c = this.containers.get(service);
      if (c && c.pid > 0 && !this.halted.has(component as Component) && isHostProcessOf(c.pid, c.id))
        out.push({ component, pid: c.pid, command: `container ${c.name} (${c.image})` });
    }
    return out;
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
    return {
      runtime: 'docker',
      components: [
        {
          name: 'api',
          url: url('api', '8080/tcp', 'http'),
          pid: null,
          config: {
            ...image('api'),
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
      ...(cache && this.faultProxyApi
        ? {
            links: (['redis', 'postgres'] as const).map((to) => ({
              from: 'api' as const,
              to,
              address: LINK_ADDRESSES[to],
              proxy: {
                name: to,
                upstream: `${to}:${to === 'redis' ? 6379 : 5432}`,
                api: this.faultProxyApi!,
              },
            })),
          }
        : {}),
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
