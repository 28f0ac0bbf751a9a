import { fileURLToPath } from 'node:url';
import { formatDurationDist, mitigationFlags } from '../../../services/api/config.js';
import type { LocalCacheConfig, LocalLabConfig, LocalLlmConfig } from '../labConfig.js';

/**
 * The local lab's launch recipes: the command line of each node service it starts (the api, the fault proxy, the LLM stub), with the flags
 * that point the api at its dependencies' links.
 */

export const LLM_STUB_MAIN = fileURLToPath(new URL('../../../services/llm-stub/main.js', import.meta.url));
export const API_MAIN = fileURLToPath(new URL('../../../services/api/main.js', import.meta.url));
export const FAULTPROXY_MAIN = fileURLToPath(
  new URL('../../../services/faultproxy/main.js', import.meta.url),
);

/**
 * The api's command line; `port` 0 lets it pick (the first start), else its old port (a
 * restart). `dataArgs` are the flags that reach its cache, database and LLM (their links).
 */
export function apiArgs(cfg: LocalLabConfig, port: number, dataArgs: readonly string[]): string[] {
  return [
    API_MAIN,
    '--host',
    cfg.host,
    '--port',
    String(port),
    '--workers',
    String(cfg.workers),
    '--work',
    formatDurationDist(cfg.work),
    '--seed',
    String(cfg.seed),
    ...Object.entries(cfg.costs ?? {}).flatMap(([name, d]) => ['--cost', `${name}=${formatDurationDist(d)}`]),
    ...mitigationFlags(cfg.mitigations ?? {}),
    ...(cfg.requestTimeoutMs !== undefined ? ['--request-timeout', String(cfg.requestTimeoutMs)] : []),
    ...dataArgs,
    '--exit-with-parent',
  ];
}

/** The fault proxy's command line (it picks its port). */
export function faultProxyArgs(cfg: LocalLabConfig): string[] {
  return [FAULTPROXY_MAIN, '-host', cfg.host, '-port', '0', '-seed', String(cfg.seed), '-exit-with-parent'];
}

/** The LLM stub's command line; `port` 0 lets it pick (the first start), else its old port (a restart behind the same link). */
export function llmStubArgs(cfg: LocalLabConfig, c: LocalLlmConfig, port: number): string[] {
  const r = c.rates;
  return [
    LLM_STUB_MAIN,
    '--host',
    cfg.host,
    '--port',
    String(port),
    '--profile',
    c.profileFile,
    '--seed',
    String(cfg.seed),
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
  ];
}

/** The api's flags to reach the LLM stub through its link `via`. */
export function llmFlags(c: LocalLlmConfig, via: string): string[] {
  return [
    '--llm',
    via,
    '--llm-slots',
    String(c.slots),
    '--llm-timeout',
    String(c.timeoutMs),
    '--llm-retry',
    `${c.retry.maxAttempts}:${c.retry.baseMs}:${c.retry.capMs}`,
  ];
}

/** The api's flags to reach Redis and Postgres through their links. */
export function dataFlags(
  c: LocalCacheConfig,
  via: { readonly redis: string; readonly postgres: string },
  db: { readonly user: string; readonly database: string },
): string[] {
  return [
    '--redis',
    via.redis,
    '--postgres',
    via.postgres,
    '--db-user',
    db.user,
    '--db-name',
    db.database,
    '--db-pool',
    String(c.pool),
    '--db-delay',
    formatDurationDist(c.queryDelay),
    '--cache-ttl',
    String(c.ttlS),
  ];
}
