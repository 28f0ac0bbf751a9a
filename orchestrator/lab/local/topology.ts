import { isApiLinkProxy } from '../apiLink.js';
import { errorCostConfig, formatDurationDist } from '../../../services/api/config.js';
import type { LabTopology } from '../Lab.js';
import type { LocalLabConfig } from '../labConfig.js';

/** What is running in a local lab now, as topology() describes it. */
export interface LocalLabState {
  readonly cfg: LocalLabConfig;
  readonly apiUrl: string;
  readonly apiPid: number | undefined;
  /** Each api replica's address and pid, when the lab runs several. */
  readonly replicas?: readonly { readonly url: string; readonly pid: number | null }[];
  readonly redis:
    { readonly port: number; readonly pid: number | undefined; readonly version: string } | undefined;
  readonly postgres:
    | {
        readonly user: string;
        readonly database: string;
        readonly port: number;
        readonly pid: number | undefined;
        readonly version: string;
      }
    | undefined;
  readonly llm: { readonly pid: number | undefined; readonly port: number } | undefined;
  /** Each dependency link of the fault proxy: where the api reaches it, and its upstream. */
  readonly links: ReadonlyMap<string, { readonly listen: string; readonly upstream: string }>;
  readonly faultProxyApi: string | undefined;
}

/** The local lab's topology for manifest.json: each component's address, pid, version and configuration, and the links between them. */
export function localTopology(s: LocalLabState): LabTopology {
  return {
    runtime: 'local',
    components: [
      {
        name: 'api',
        url: s.apiUrl,
        pid: s.apiPid ?? null,
        ...(s.replicas ? { replicas: s.replicas } : {}),
        config: {
          ...(s.cfg.replicas !== undefined ? { replicas: s.cfg.replicas } : {}),
          ...(s.cfg.costs
            ? {
                costs: Object.fromEntries(
                  Object.entries(s.cfg.costs).map(([k, d]) => [k, formatDurationDist(d)]),
                ),
              }
            : {}),
          ...(s.cfg.server ? { server: s.cfg.server } : {}),
          workers: s.cfg.workers,
          work: formatDurationDist(s.cfg.work),
          queue: s.cfg.mitigations?.queue ?? 'fifo',
          mitigations: s.cfg.mitigations ?? {},
          seed: s.cfg.seed,
          ...(s.cfg.requestTimeoutMs !== undefined ? { requestTimeoutMs: s.cfg.requestTimeoutMs } : {}),
          ...(s.cfg.errorCost ? { errorCost: errorCostConfig(s.cfg.errorCost) } : {}),
        },
      },
      ...(s.redis && s.cfg.cache
        ? [
            {
              name: 'redis' as const,
              url: `redis://${s.cfg.host}:${s.redis.port}`,
              pid: s.redis.pid ?? null,
              version: s.redis.version,
              config: { ttlS: s.cfg.cache.ttlS, prewarm: s.cfg.cache.prewarm, persistence: 'none' },
            },
          ]
        : []),
      ...(s.postgres && s.cfg.cache
        ? [
            {
              name: 'postgres' as const,
              url: `postgres://${s.postgres.user}@${s.cfg.host}:${s.postgres.port}/${s.postgres.database}`,
              pid: s.postgres.pid ?? null,
              version: s.postgres.version,
              config: {
                keys: s.cfg.cache.keys,
                pool: s.cfg.cache.pool,
                queryDelay: formatDurationDist(s.cfg.cache.queryDelay),
                query: 'SELECT value, pg_sleep(delay) FROM items WHERE id = $key (primary-key index)',
                fsync: false,
              },
            },
          ]
        : []),
      ...(s.llm && s.cfg.llm
        ? [
            {
              name: 'llm' as const,
              url: `http://${s.cfg.host}:${s.llm.port}`,
              pid: s.llm.pid ?? null,
              config: {
                profile: s.cfg.llm.profileName,
                profileFile: s.cfg.llm.profileFile,
                rates: s.cfg.llm.rates,
                apiSlots: s.cfg.llm.slots,
                apiTimeoutMs: s.cfg.llm.timeoutMs,
                apiRetry: s.cfg.llm.retry,
              },
            },
          ]
        : []),
    ],
    ...(s.links.size > 0
      ? {
          links: [
            // The clients' link to each api replica (apiLink.ts), when the run goes through it.
            ...[...s.links.keys()]
              .filter(isApiLinkProxy)
              .map((name) => ({ from: 'client', to: 'api' as const, name })),
            ...(['redis', 'postgres', 'llm'] as const)
              .filter((to) => s.links.has(to))
              .map((to) => ({ from: 'api' as const, to, name: to })),
          ].map(({ from, to, name }) => {
            const l = s.links.get(name);
            return {
              from,
              to,
              address: l?.listen ?? '',
              ...(l && s.faultProxyApi
                ? { proxy: { name, upstream: l.upstream, api: s.faultProxyApi } }
                : {}),
            };
          }),
        }
      : {}),
  };
}
