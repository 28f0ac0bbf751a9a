import type { DurationDist } from '../../foundation/distributions.js';
import type { DbRetryPolicy } from './lookup.js';
import type { Mitigations } from './server.js';
import type { ErrorCost } from './workHandler.js';

/**
 * Parses a work distribution flag: `constant:20ms`, `exponential:20ms`,
 * `lognormal:20ms:0.5` (mean, then sigma in log space).
 */
export function parseDurationDist(s: string, flag = 'work'): DurationDist {
  const [dist, mean, sigma] = s.split(':');
  const meanMs = Number(String(mean).replace(/ms$/, ''));
  if (!(meanMs > 0)) throw new Error(`--${flag}: mean must be a positive number of ms (got "${s}")`);
  if (dist === 'constant' || dist === 'exponential') return { dist, meanMs };
  if (dist === 'lognormal') {
    const sg = Number(sigma);
    if (!(sg > 0)) throw new Error(`--${flag}: lognormal needs a sigma > 0 (got "${s}")`);
    return { dist, meanMs, sigma: sg };
  }
  throw new Error(`--${flag}: unknown distribution "${dist}" (constant, exponential, lognormal)`);
}

export function formatDurationDist(d: DurationDist): string {
  return d.dist === 'lognormal' ? `lognormal:${d.meanMs}ms:${d.sigma}` : `${d.dist}:${d.meanMs}ms`;
}

function positiveNumber(flag: string, v: string, integer: boolean): number {
  const n = Number(v);
  if (!(n > 0) || (integer && !Number.isInteger(n)))
    throw new Error(`--${flag}: expected a positive ${integer ? 'whole ' : ''}number (got "${v}")`);
  return n;
}

/** The api's mitigation flags (see main.ts); each is off unless given. */
export function parseMitigations(v: {
  queue?: string | undefined;
  'queue-bound'?: string | undefined;
  'concurrency-limit'?: string | undefined;
  'shed-queue-time'?: string | undefined;
  codel?: string | undefined;
  'deadline-drop'?: boolean | undefined;
}): Mitigations {
  const queue = v.queue ?? 'fifo';
  if (queue !== 'fifo' && queue !== 'lifo') throw new Error(`--queue: fifo or lifo (got "${queue}")`);
  let codel: Mitigations['codel'];
  if (v.codel !== undefined) {
    const [target, interval] = v.codel.split(':');
    codel = {
      targetMs: positiveNumber('codel', String(target), false),
      intervalMs: positiveNumber('codel', String(interval), false),
    };
  }
  return {
    queue,
    ...(v['queue-bound'] !== undefined
      ? {
          queueBound:
            Number(v['queue-bound']) === 0 ? 0 : positiveNumber('queue-bound', v['queue-bound'], true),
        }
      : {}),
    ...(v['concurrency-limit'] !== undefined
      ? { concurrencyLimit: positiveNumber('concurrency-limit', v['concurrency-limit'], true) }
      : {}),
    ...(v['shed-queue-time'] !== undefined
      ? { shedQueueTimeMs: positiveNumber('shed-queue-time', v['shed-queue-time'], false) }
      : {}),
    ...(codel ? { codel } : {}),
    ...(v['deadline-drop'] ? { deadlineDrop: true } : {}),
  };
}

/** The flags that give `m` to the api (the inverse of parseMitigations). */
export function mitigationFlags(m: Mitigations): string[] {
  return [
    ...(m.queue && m.queue !== 'fifo' ? ['--queue', m.queue] : []),
    ...(m.queueBound !== undefined ? ['--queue-bound', String(m.queueBound)] : []),
    ...(m.concurrencyLimit !== undefined ? ['--concurrency-limit', String(m.concurrencyLimit)] : []),
    ...(m.shedQueueTimeMs !== undefined ? ['--shed-queue-time', String(m.shedQueueTimeMs)] : []),
    ...(m.codel ? ['--codel', `${m.codel.targetMs}:${m.codel.intervalMs}`] : []),
    ...(m.deadlineDrop ? ['--deadline-drop'] : []),
  ];
}

/** --db-retry ATTEMPTS:TIMEOUT_MS (the inverse of apiFlags' --db-retry). */
export function parseDbRetry(s: string): DbRetryPolicy {
  const [attempts, timeout] = s.split(':').map(Number);
  if (!(Number.isInteger(attempts) && attempts! >= 1 && timeout! > 0))
    throw new Error(`--db-retry: expected ATTEMPTS:TIMEOUT_MS (got "${s}")`);
  return { maxAttempts: attempts!, timeoutMs: timeout! };
}

/** host:port (IPv4 or a name). */
export function parseHostPort(flag: string, s: string): { host: string; port: number } {
  const i = s.lastIndexOf(':');
  const port = Number(s.slice(i + 1));
  if (i <= 0 || !Number.isInteger(port) || port < 1 || port > 65535)
    throw new Error(`--${flag}: expected host:port (got "${s}")`);
  return { host: s.slice(0, i), port };
}

/** The api's configuration as its flags carry it (main.ts parses them back). */
export interface ApiFlagsConfig {
  readonly workers: number;
  readonly work: DurationDist;
  readonly seed: number;
  readonly costs?: Readonly<Record<string, DurationDist>> | undefined;
  readonly mitigations?: Mitigations | undefined;
  readonly requestTimeoutMs?: number | undefined;
  readonly errorCost?: ErrorCost | undefined;
}

/** An error cost as a manifest records it (the api's topology). */
export function errorCostConfig(e: ErrorCost): { work: string; onShed: boolean } {
  return { work: formatDurationDist(e.work), onShed: e.onShed ?? false };
}

/** The flags that give an error cost to the api (main.ts parses them back with parseErrorCost). */
export function errorCostFlags(e: ErrorCost | undefined): string[] {
  if (!e) return [];
  return ['--error-cost', formatDurationDist(e.work), ...(e.onShed ? ['--error-cost-on-shed'] : [])];
}

/** The error cost from --error-cost DIST and --error-cost-on-shed (the inverse of errorCostFlags). */
export function parseErrorCost(v: {
  'error-cost'?: string | undefined;
  'error-cost-on-shed'?: boolean | undefined;
}): ErrorCost | undefined {
  if (v['error-cost'] === undefined) {
    if (v['error-cost-on-shed']) throw new Error('--error-cost-on-shed needs --error-cost');
    return undefined;
  }
  return {
    work: parseDurationDist(v['error-cost'], 'error-cost'),
    ...(v['error-cost-on-shed'] ? { onShed: true } : {}),
  };
}

/** Where the api reaches its dependencies, and its policy toward them, as flags carry them. */
export interface ApiDependencyFlags {
  readonly cache?: {
    /** host:port of Redis (through its link). */
    readonly redis: string;
    /** host:port of Postgres (through its link). */
    readonly postgres: string;
    readonly dbUser: string;
    readonly dbName: string;
    readonly pool: number;
    readonly queryDelay: DurationDist;
    readonly ttlS: number;
    /** The client-side query timeout and retries (lab.db.timeout, lab.db.retry). */
    readonly retry?: DbRetryPolicy | undefined;
  };
  readonly llm?: {
    /** host:port of the LLM provider (through its link). */
    readonly address: string;
    readonly slots: number;
    readonly timeoutMs: number;
    readonly retry: { readonly maxAttempts: number; readonly baseMs: number; readonly capMs: number };
  };
}

/**
 * The api's flags for a configuration (main.ts's usage): built once, for the local
 * lab's child process and the docker lab's container alike; where it listens is the
 * caller's to add.
 */
export function apiFlags(cfg: ApiFlagsConfig, deps: ApiDependencyFlags = {}): string[] {
  const c = deps.cache;
  const l = deps.llm;
  return [
    '--workers',
    String(cfg.workers),
    '--work',
    formatDurationDist(cfg.work),
    '--seed',
    String(cfg.seed),
    ...Object.entries(cfg.costs ?? {}).flatMap(([name, d]) => ['--cost', `${name}=${formatDurationDist(d)}`]),
    ...mitigationFlags(cfg.mitigations ?? {}),
    ...(cfg.requestTimeoutMs !== undefined ? ['--request-timeout', String(cfg.requestTimeoutMs)] : []),
    ...errorCostFlags(cfg.errorCost),
    ...(c
      ? [
          '--redis',
          c.redis,
          '--postgres',
          c.postgres,
          '--db-user',
          c.dbUser,
          '--db-name',
          c.dbName,
          '--db-pool',
          String(c.pool),
          '--db-delay',
          formatDurationDist(c.queryDelay),
          '--cache-ttl',
          String(c.ttlS),
          ...(c.retry ? ['--db-retry', `${c.retry.maxAttempts}:${c.retry.timeoutMs}`] : []),
        ]
      : []),
    ...(l
      ? [
          '--llm',
          l.address,
          '--llm-slots',
          String(l.slots),
          '--llm-timeout',
          String(l.timeoutMs),
          '--llm-retry',
          `${l.retry.maxAttempts}:${l.retry.baseMs}:${l.retry.capMs}`,
        ]
      : []),
  ];
}
