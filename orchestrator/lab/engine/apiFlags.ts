import { apiFlags } from '../../../services/api/config.js';
import type { LocalLabConfig } from '../labConfig.js';

/** The api's configuration in either runtime: the local lab's, without where it listens. */
export type ApiLabConfig = Omit<LocalLabConfig, 'host' | 'apiPort' | 'logFile'>;

/** Where the api reaches its dependencies inside the compose network: Toxiproxy's links. */
export const LINK_ADDRESSES = { redis: 'toxiproxy:26379', postgres: 'toxiproxy:25432' } as const;

/**
 * The api's flags for an experiment (METABENCH_API_FLAGS of docker-compose.yml): the same
 * as the local lab gives its api, with the dependencies reached through Toxiproxy's links.
 */
export function dockerApiFlags(cfg: ApiLabConfig): string[] {
  const c = cfg.cache;
  return apiFlags(
    cfg,
    c
      ? {
          cache: {
            redis: LINK_ADDRESSES.redis,
            postgres: LINK_ADDRESSES.postgres,
            dbUser: 'postgres',
            dbName: 'postgres',
            pool: c.pool,
            queryDelay: c.queryDelay,
            ttlS: c.ttlS,
            retry: c.retry,
          },
        }
      : {},
  );
}

/** The flags as one string for compose's interpolation, which splits it shell-style: no value may need quoting. */
export function flagsString(flags: readonly string[]): string {
  for (const f of flags)
    if (!/^[\w.:=,/+-]+$/.test(f))
      throw new Error(`api flag "${f}" cannot be passed through compose unquoted`);
  return flags.join(' ');
}
