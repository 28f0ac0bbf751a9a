import { fileURLToPath } from 'node:url';
import type { DurationDist } from '../../../foundation/distributions.js';
import { formatDurationDist, mitigationFlags } from '../../../services/api/config.js';
import type { Mitigations } from '../../../services/api/server.js';
import type { UpstreamRetry } from '../../../services/api/llmUpstream.js';
import type { FaultRates } from '../../../services/llm-stub/faults.js';

/**
 * The local lab's launch recipes: what it is configured with, and the command line of
 * each node service it starts (the api, the fault proxy, the LLM stub), with the flags
 * that point the api at its dependencies' links.
 */

export interface LocalLabConfig {
  readonly host: string;
  /** 0 lets the api pick a free port. */
  readonly apiPort: number;
  readonly workers: number;
  readonly work: DurationDist;
  readonly costs?: Readonly<Record<string, DurationDist>>;
  readonly seed: number;
  /** The api's server-side mitigations (all off when absent). */
  readonly mitigations?: Mitigations;
  /** Server-side request timeout of the api (ms from arrival). */
  readonly requestTimeoutMs?: number;
  /** A read-through cache (redis-server) in front of a database (postgres), both started by the lab. */
  readonly cache?: LocalCacheConfig;
  /** The stub LLM provider, started by the lab and reached by the api through its `llm` link. */
  readonly llm?: LocalLlmConfig;
  /** Where the components' stdout/stderr go (a file in the run folder); undefined discards them. */
  readonly logFile?: string;
  /**
   * Called whenever the lab's set of processes changes (a start, a kill, a restart), so
   * the caller can journal teardownRecipe(): a killed orchestrator leaves no process behind.
   */
  readonly onProcessesChanged?: () => void;
}

export interface LocalCacheConfig {
  readonly ttlS: number;
  /** Fill the cache with every key before the run (as the OSDI '22 reproducer did), so the cold start is not itself a trigger. */
  readonly prewarm: boolean;
  /** Rows in the database's table (ids 0..keys). */
  readonly keys: number;
  /** The api's DB connection pool size p. */
  readonly pool: number;
  /** Server-side delay of each miss query. */
  readonly queryDelay: DurationDist;
}

export interface LocalLlmConfig {
  readonly profileFile: string;
  readonly profileName: string;
  readonly rates: FaultRates;
  /** The api's provider slots, per-attempt timeout and retry policy toward the provider. */
  readonly slots: number;
  readonly timeoutMs: number;
  readonly retry: UpstreamRetry;
}

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
