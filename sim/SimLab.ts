import { seededRng } from '../foundation/rng.js';
import { errorCostConfig, formatDurationDist } from '../services/api/config.js';
import { BenchError } from '../foundation/errors.js';
import type { Component, Lab, LabProcess, LabTopology, UndoRecipe } from '../orchestrator/lab/Lab.js';
import type { LinkControl, ToxicSpec, ToxicState } from '../orchestrator/lab/links.js';
import { SimApi, ACCEPT_BACKLOG, type SimApiConfig } from './api.js';
import type { SimClock } from './clock.js';
import { SimPostgresServer, SimRedisServer, PG_LOOKUP_MS } from './data.js';
import { SimLink } from './link.js';
import { KEEP_ALIVE_MS } from '../bench/transport/http.js';

export interface SimLabConfig extends SimApiConfig {
  /** The cache's keys (ids 0..keys in the database) and whether they are filled before the run. */
  readonly keys?: number;
  readonly prewarm?: boolean;
}

/**
 * The simulation behind the Lab seam: the same triggers act on it (pause, kill, stop,
 * start, flush, toxics and partitions on its links), in virtual time. Every action
 * takes effect at once at the clock's current time; nothing needs undoing after a
 * crash (the journal's recipes say so).
 */
export class SimLab implements Lab {
  readonly runtime = 'sim' as const;
  readonly apiUrl = 'sim://api';
  readonly faultProxyApi = undefined;
  readonly api: SimApi;
  readonly redis: SimRedisServer | undefined;
  readonly postgres: SimPostgresServer | undefined;
  private readonly links = new Map<string, SimLink>();
  readonly linkControl: LinkControl | undefined;

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
      this.api = new SimApi(clock, cfg, { redis: this.redis, postgres: this.postgres });
      this.linkControl = simLinkControl(this.links);
    } else {
      this.redis = undefined;
      this.postgres = undefined;
      this.api = new SimApi(clock, cfg);
      this.linkControl = undefined;
    }
  }

  async up(): Promise<void> {}

  async down(): Promise<void> {}

  private proc(c: Component): { readonly state: string } {
    const p =
      c === 'api'
        ? this.api.proc
        : c === 'redis'
          ? this.redis?.proc
          : c === 'postgres'
            ? this.postgres?.proc
            : undefined;
    if (!p) throw new BenchError('E_LAB', `component "${c}" is not running in this lab`);
    return p;
  }

  async pause(c: Component): Promise<void> {
    if (this.proc(c).state === 'down')
      throw new BenchError('E_LAB', `component "${c}" is not running in this lab`);
    if (c === 'api') this.api.pause();
    else if (c === 'redis') this.redis!.proc.pause();
    else this.postgres!.proc.pause();
  }

  async resume(c: Component): Promise<void> {
    this.proc(c);
    if (c === 'api') this.api.resume();
    else if (c === 'redis') this.redis!.proc.resume();
    else this.postgres!.proc.resume();
  }

  pauseUndoRecipe(c: Component): UndoRecipe {
    return { kind: 'none', what: `resume ${c} (simulated: nothing outlives the run)` };
  }

  async kill(c: Component): Promise<void> {
    if (this.proc(c).state === 'down')
      throw new BenchError('E_LAB', `component "${c}" is not running in this lab`);
    if (c === 'api') this.api.kill();
    else if (c === 'redis') {
      this.redis!.kill();
      this.api.dependencyDied('redis');
    } else {
      this.postgres!.proc.kill();
      this.api.dependencyDied('postgres');
    }
  }

  /** A graceful stop closes the connections just as a kill does, from a client's side. */
  async stop(c: Component): Promise<void> {
    await this.kill(c);
  }

  async start(c: Component): Promise<void> {
    this.proc(c);
    if (c === 'api') this.api.start();
    else if (c === 'redis') this.redis!.proc.start();
    else this.postgres!.proc.start();
  }

  teardownRecipe(): UndoRecipe {
    return { kind: 'none', what: 'the simulated lab (nothing outlives the run)' };
  }

  startUndoRecipe(c: Component): UndoRecipe {
    return { kind: 'none', what: `start ${c} again (simulated: nothing outlives the run)` };
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
          config: {
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
      ...(cfg.cache
        ? {
            links: (['redis', 'postgres'] as const).map((to) => ({
              from: 'api' as const,
              to,
              address: `sim://${to}`,
              proxy: { name: to, upstream: `sim://${to}`, api: 'sim' },
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
