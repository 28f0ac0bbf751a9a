import type { ApiState } from '../services/api/apiState.js';
import { seededRng } from '../foundation/rng.js';
import { errorCostConfig, formatDurationDist } from '../services/api/config.js';
import { BenchError } from '../foundation/errors.js';
import type { Component, Lab, LabProcess, LabTopology, Target, UndoRecipe } from '../orchestrator/lab/Lab.js';
import { replicaSeed } from '../orchestrator/lab/labConfig.js';
import { formatTarget, replicaIndices, targetOf, type ParsedTarget } from '../orchestrator/lab/target.js';
import type { LinkControl, ToxicSpec, ToxicState } from '../orchestrator/lab/links.js';
import { SimApi, ACCEPT_BACKLOG, type SimApiConfig } from './api.js';
import type { SimClock } from './clock.js';
import { SimPostgresServer, SimRedisServer, PG_LOOKUP_MS } from './data.js';
import { SimLink } from './link.js';
import { HTTP_REPLY_BYTES, HTTP_REQUEST_BYTES } from './transport.js';
import { apiLinkProxy } from '../orchestrator/lab/apiLink.js';
import { KEEP_ALIVE_MS } from '../bench/transport/http.js';

export interface SimLabConfig extends SimApiConfig {
  /** The cache's keys (ids 0..keys in the database) and whether they are filled before the run. */
  readonly keys?: number;
  readonly prewarm?: boolean;
  /** Identical simulated api servers (lab.api.replicas); absent: one. */
  readonly replicas?: number;
  /** The clients reach each api through its api link (lab/apiLink.ts); absent: directly. */
  readonly apiLink?: boolean;
}

/**
 * The simulation behind the Lab seam: the same triggers act on it (pause, kill, stop,
 * start, flush, toxics and partitions on its links), in virtual time. Every action
 * takes effect at once at the clock's current time; nothing needs undoing after a
 * crash (the journal's recipes say so). With lab.api.replicas the api is N SimApi
 * servers, each with its own workers, queue and process, all reaching the same
 * simulated Redis and Postgres through the same links.
 */
export class SimLab implements Lab {
  readonly runtime = 'sim' as const;
  readonly apiUrl = 'sim://api';
  readonly apiUrls: readonly string[];
  readonly faultProxyApi = undefined;
  /** The api servers, by replica index. */
  readonly apis: readonly SimApi[];
  /** Replica 0: the api of a lab of one. */
  readonly api: SimApi;
  readonly redis: SimRedisServer | undefined;
  readonly postgres: SimPostgresServer | undefined;
  private readonly links = new Map<string, SimLink>();
  readonly linkControl: LinkControl | undefined;
  /** The api link to each replica, by replica index, when the run goes through it. */
  readonly apiLinks: readonly (SimLink | undefined)[];
  readonly apiControl = {
    setState: async (replica: number, state: ApiState): Promise<void> => {
      const api = this.apis[replica];
      if (!api) throw new BenchError('E_LAB', `no api replica ${replica} in this lab`);
      const problem = api.setState(state);
      if (problem) throw new BenchError('E_LAB', `the api refused its state: ${problem}`);
    },
  };

  constructor(
    clock: SimClock,
    private readonly cfg: SimLabConfig,
  ) {
    if (cfg.cache) {
      const redisLink = new SimLink('redis', clock, seededRng(cfg.seed, 'sim-link-redis'));
      const pgLink = new SimLink('postgres', clock, seededRng(cfg.seed, 'sim-link-postgres'));
      this.links.set('redis', redisLink);
      this.links.set('postgres', pgLink);
      this.redis = new SimRedisServer(clock, redisLink);
      this.postgres = new SimPostgresServer(clock, pgLink);
      if (cfg.prewarm) for (let k = 0; k <= (cfg.keys ?? 0); k++) this.redis.set(k, cfg.cache.ttlMs);
      const deps = { redis: this.redis, postgres: this.postgres };
      this.apis = this.replicaConfigs().map((c) => new SimApi(clock, c, deps));
    } else {
      this.redis = undefined;
      this.postgres = undefined;
      this.apis = this.replicaConfigs().map((c) => new SimApi(clock, c));
    }
    const n = this.apis.length;
    this.apiLinks = this.apis.map((_, i) => {
      if (!cfg.apiLink) return undefined;
      const name = apiLinkProxy(i, n);
      const l = new SimLink(name, clock, seededRng(cfg.seed, `sim-link-${name}`));
      this.links.set(name, l);
      return l;
    });
    this.linkControl = this.links.size > 0 ? simLinkControl(this.links) : undefined;
    this.api = this.apis[0]!;
    this.apiUrls = this.apis.length === 1 ? [this.apiUrl] : this.apis.map((_, i) => `sim://api${i}`);
  }

  /** Each replica's configuration: the lab's, with the replica's own seed (as the lab's processes get). */
  private replicaConfigs(): SimApiConfig[] {
    return Array.from({ length: this.cfg.replicas ?? 1 }, (_, i) => ({
      ...this.cfg,
      seed: replicaSeed(this.cfg.seed, i),
    }));
  }

  /** The api servers a target on the api acts on: its one replica, or all. */
  private apisOf(t: ParsedTarget): SimApi[] {
    try {
      return replicaIndices(t, this.apis.length).map((i) => this.apis[i]!);
    } catch (err) {
      throw new BenchError('E_LAB', (err as Error).message);
    }
  }

  async up(): Promise<void> {}

  async down(): Promise<void> {}

  private proc(c: Exclude<Component, 'api'>): { readonly state: string } {
    const p = c === 'redis' ? this.redis?.proc : c === 'postgres' ? this.postgres?.proc : undefined;
    if (!p) throw new BenchError('E_LAB', `component "${c}" is not running in this lab`);
    return p;
  }

  /** The running api servers `t` names; an error when one of them is down. */
  private runningApis(t: ParsedTarget): SimApi[] {
    const apis = this.apisOf(t);
    if (apis.some((a) => a.proc.state === 'down'))
      throw new BenchError('E_LAB', `component "${formatTarget(t)}" is not running in this lab`);
    return apis;
  }

  async pause(target: Target): Promise<void> {
    const t = targetOf(target);
    if (t.component === 'api') for (const a of this.runningApis(t)) a.pause();
    else {
      if (this.proc(t.component).state === 'down')
        throw new BenchError('E_LAB', `component "${t.component}" is not running in this lab`);
      if (t.component === 'redis') this.redis!.proc.pause();
      else this.postgres!.proc.pause();
    }
  }

  async resume(target: Target): Promise<void> {
    const t = targetOf(target);
    if (t.component === 'api') for (const a of this.apisOf(t)) a.resume();
    else {
      this.proc(t.component);
      if (t.component === 'redis') this.redis!.proc.resume();
      else this.postgres!.proc.resume();
    }
  }

  pauseUndoRecipe(t: Target): UndoRecipe {
    return { kind: 'none', what: `resume ${t} (simulated: nothing outlives the run)` };
  }

  async kill(target: Target): Promise<void> {
    const t = targetOf(target);
    if (t.component === 'api') {
      for (const a of this.runningApis(t)) a.kill();
      return;
    }
    if (this.proc(t.component).state === 'down')
      throw new BenchError('E_LAB', `component "${t.component}" is not running in this lab`);
    // A dependency died under every api replica's connections to it.
    if (t.component === 'redis') {
      this.redis!.kill();
      for (const a of this.apis) a.dependencyDied('redis');
    } else {
      this.postgres!.proc.kill();
      for (const a of this.apis) a.dependencyDied('postgres');
    }
  }

  /** A graceful stop closes the connections just as a kill does, from a client's side. */
  async stop(t: Target): Promise<void> {
    await this.kill(t);
  }

  async start(target: Target): Promise<void> {
    const t = targetOf(target);
    if (t.component === 'api') for (const a of this.apisOf(t)) a.start();
    else {
      this.proc(t.component);
      if (t.component === 'redis') this.redis!.proc.start();
      else this.postgres!.proc.start();
    }
  }

  teardownRecipe(): UndoRecipe {
    return { kind: 'none', what: 'the simulated lab (nothing outlives the run)' };
  }

  startUndoRecipe(t: Target): UndoRecipe {
    return { kind: 'none', what: `start ${t} again (simulated: nothing outlives the run)` };
  }

  async flushCache(): Promise<void> {
    if (!this.redis || this.redis.proc.state === 'down')
      throw new BenchError('E_LAB', 'this lab has no cache to flush');
    this.redis.flushAll();
  }

  async scrapeText(): Promise<string> {
    throw new BenchError('E_LAB', 'the simulation is not scraped: its series come from its own counters');
  }

  topology(): LabTopology {
    const cfg = this.cfg;
    return {
      runtime: 'sim',
      components: [
        {
          name: 'api',
          url: this.apiUrl,
          pid: null,
          ...(this.apis.length > 1 ? { replicas: this.apiUrls.map((url) => ({ url, pid: null })) } : {}),
          config: {
            ...(cfg.replicas !== undefined ? { replicas: cfg.replicas } : {}),
            ...(cfg.costs
              ? {
                  costs: Object.fromEntries(
                    Object.entries(cfg.costs).map(([k, d]) => [k, formatDurationDist(d)]),
                  ),
                }
              : {}),
            workers: cfg.workers,
            work: formatDurationDist(cfg.work),
            queue: cfg.mitigations?.queue ?? 'fifo',
            mitigations: cfg.mitigations ?? {},
            seed: cfg.seed,
            ...(cfg.requestTimeoutMs !== undefined ? { requestTimeoutMs: cfg.requestTimeoutMs } : {}),
            ...(cfg.errorCost ? { errorCost: errorCostConfig(cfg.errorCost) } : {}),
            acceptBacklog: ACCEPT_BACKLOG,
          },
        },
        ...(cfg.cache
          ? [
              {
                name: 'redis' as const,
                url: 'sim://redis',
                pid: null,
                config: { ttlS: cfg.cache.ttlMs / 1000, prewarm: cfg.prewarm ?? false, persistence: 'none' },
              },
              {
                name: 'postgres' as const,
                url: 'sim://postgres',
                pid: null,
                config: {
                  keys: cfg.keys ?? 0,
                  pool: cfg.cache.pool,
                  queryDelay: formatDurationDist(cfg.cache.queryDelay),
                  lookupMs: PG_LOOKUP_MS,
                },
              },
            ]
          : []),
      ],
      ...(this.links.size > 0
        ? {
            links: [
              ...this.apiLinks.flatMap((l, i) =>
                l ? [{ from: 'client', to: 'api' as const, name: l.name, up: this.apiUrls[i]! }] : [],
              ),
              ...(cfg.cache
                ? (['redis', 'postgres'] as const).map((to) => ({
                    from: 'api' as const,
                    to,
                    name: to,
                    up: `sim://${to}`,
                  }))
                : []),
            ].map(({ from, to, name, up }) => ({
              from,
              to,
              address: `sim://${name}`,
              proxy: { name, upstream: up, api: 'sim' },
            })),
          }
        : {}),
    };
  }

  processes(): readonly LabProcess[] {
    return [];
  }

  /** What the simulation assumes beyond the experiment file (manifest.json). */
  static assumptions(): Record<string, unknown> {
    return {
      network: 'no delay between client and api, or between the api and its dependencies (besides toxics)',
      apiLink: `through the api link, a request weighs ${HTTP_REQUEST_BYTES} bytes and a reply ${HTTP_REPLY_BYTES} (for its bandwidth toxic); an api that refuses behind it resets the client's connection`,
      acceptBacklog: ACCEPT_BACKLOG,
      keepAliveMs: KEEP_ALIVE_MS,
      pgLookupMs: PG_LOOKUP_MS,
      restart: 'a killed or stopped component starts again at once at the trigger end',
    };
  }
}

function simLinkControl(links: Map<string, SimLink>): LinkControl {
  const get = (name: string): SimLink => {
    const l = links.get(name);
    if (!l) throw new BenchError('E_LAB', `this lab has no link ${name}`);
    return l;
  };
  const none = (what: string): UndoRecipe => ({
    kind: 'none',
    what: `${what} (simulated: nothing outlives the run)`,
  });
  return {
    listToxics: async (link: string): Promise<ToxicState[]> => get(link).listToxics(),
    addToxic: async (link: string, spec: ToxicSpec) => ({
      toxic: get(link).addToxic(spec),
      undo: none(`remove toxic ${spec.name ?? spec.type} from link ${link}`),
    }),
    removeToxic: async (link: string, name: string) => get(link).removeToxic(name),
    disable: async (link: string) => {
      get(link).disable();
      return none(`re-enable link ${link}`);
    },
    enable: async (link: string) => get(link).enable(),
    removeToxicRecipe: (link: string, toxic: string) => none(`remove toxic ${toxic} from link ${link}`),
    enableRecipe: (link: string) => none(`re-enable link ${link}`),
  };
}
