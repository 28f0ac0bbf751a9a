import type { Mitigations } from '../../services/api/poolOptions.js';
import type { DbRetryPolicy } from '../../services/api/lookup.js';
import type { Experiment } from '../spec/schema.js';
import { toDurationDist } from '../../foundation/fields.js';
import { resolve } from 'node:path';
import { DEFAULT_PROFILE, loadProfile } from '../../services/llm-stub/profile.js';
import type { DurationDist } from '../../foundation/distributions.js';
import type { FaultRates } from '../../services/llm-stub/faults.js';
import type { UpstreamRetry } from '../../services/api/llmUpstream.js';
import type { ErrorCost } from '../../services/api/workHandler.js';
import { deriveSeed } from '../../foundation/rng.js';
import { apiReplicaCount, type LabSection } from '../spec/sections/lab.js';
import { builtinLab } from '../spec/builtinLab.js';
import { usesApiLink } from './apiLink.js';

/** A real lab's configuration (the local runtime's processes; the docker runtime's api flags). */
export interface LocalLabConfig {
  readonly host: string;
  /** 0 lets the api pick a free port (each replica its own); else replica i listens on apiPort + i. */
  readonly apiPort: number;
  /** Identical api processes (lab.api.replicas); absent: one. */
  readonly replicas?: number;
  /** The clients reach the api through its link in the fault proxy (apiLink.ts); absent: directly. */
  readonly apiLink?: boolean;
  readonly workers: number;
  readonly work: DurationDist;
  readonly costs?: Readonly<Record<string, DurationDist>>;
  readonly seed: number;
  /** The api's server-side mitigations (all off when absent). */
  readonly mitigations?: Mitigations;
  /** Server-side request timeout of the api (ms from arrival). */
  readonly requestTimeoutMs?: number;
  /** Extra work the api spends on a request that ends in an error (lab.api.errorCost). */
  readonly errorCost?: ErrorCost;
  /** A read-through cache (redis-server) in front of a database (postgres), both started by the lab. */
  readonly cache?: LocalCacheConfig;
  /** The stub LLM provider, started by the lab and reached by the api through its `llm` link. */
  readonly llm?: LocalLlmConfig;
  /** A reference server plays the api (lab.api.server other than builtin): the local runtime only. */
  readonly server?: ReferenceServerConfig;
  /** Where the components' stdout/stderr go (a file in the run folder); undefined discards them. */
  readonly logFile?: string;
  /**
   * Called whenever the lab's set of processes changes (a start, a kill, a restart), so
   * the caller can journal teardownRecipe(): a killed orchestrator leaves no process behind.
   */
  readonly onProcessesChanged?: () => void;
  /**
   * The local runtime: pin the orchestrator and the lab's processes to disjoint CPUs while
   * the lab is up (local/pinning.ts); absent: pinned from 4 CPUs; true: --pin; false: --no-pin.
   */
  readonly pin?: boolean;
}

/** lab.api.server in the lab's terms: which real server, and the JVM's memory and queue. */
export interface ReferenceServerConfig {
  readonly kind: 'php-fpm' | 'gunicorn' | 'jvm';
  readonly jvm?: {
    readonly heapMb: number;
    readonly collector: 'serial' | 'parallel' | 'g1';
    readonly allocBytes: number;
    /** Bytes each request allocates while served and drops at once (lab.api.jvm.churnKiB). */
    readonly churnBytes: number;
    /** Requests that may wait for a thread (lab.api.queueLimit); absent: unbounded. */
    readonly queue?: number;
  };
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
  /** The api's client-side query timeout and retries (lab.db.timeout, lab.db.retry); absent: none. */
  readonly retry?: DbRetryPolicy;
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

/** An experiment's lab in the api's terms, whatever runs it: what every runtime builds its lab from. */
export type LabConfig = Omit<LocalLabConfig, 'host' | 'apiPort' | 'logFile' | 'onProcessesChanged' | 'pin'>;

/** The experiment's lab (the api, its cache and database, its LLM provider) for any runtime, seeded. */
export function labConfig(e: Experiment, seed: number): LabConfig {
  const lab = builtinLab(e, "the built-in lab's processes");
  const replicas = apiReplicaCount(lab.api);
  return {
    ...(replicas > 1 ? { replicas } : {}),
    ...(usesApiLink(lab.api, e.schedule.triggers) ? { apiLink: true } : {}),
    workers: lab.api.workers,
    work: toDurationDist(lab.api.work),
    ...(lab.api.costs
      ? { costs: Object.fromEntries(Object.entries(lab.api.costs).map(([k, d]) => [k, toDurationDist(d)])) }
      : {}),
    seed,
    mitigations: apiMitigations(lab.api),
    ...apiErrorCost(lab.api),
    ...labCacheConfig(lab),
    ...labLlmConfig(lab),
    ...labServerConfig(lab.api),
  };
}

/** The reference server that plays the api, if the experiment names one (lab.api.server). */
export function labServerConfig(api: NonNullable<Experiment['lab']>['api']): {
  server?: ReferenceServerConfig;
} {
  const s = api.server;
  if (s === undefined || s === 'builtin') return {};
  const j = api.jvm;
  return {
    server: {
      kind: s,
      ...(s === 'jvm' && j
        ? {
            jvm: {
              heapMb: j.heapMiB,
              collector: j.collector,
              allocBytes: j.holdKiB * 1024,
              churnBytes: j.churnKiB * 1024,
              ...(api.queueLimit !== undefined ? { queue: api.queueLimit } : {}),
            },
          }
        : {}),
    },
  };
}

/**
 * The seed of api replica `i`: replica 0 keeps the lab's seed (a lab of one api draws as
 * it always did); the others get their own streams, so that replicas served round-robin
 * do not draw the same work time for their n-th request.
 */
export function replicaSeed(seed: number, i: number): number {
  return i === 0 ? seed : deriveSeed(seed, `api-replica-${i}`);
}

/** The local runtime's configuration of an experiment's lab (loopback, free ports). */
export function localLabConfig(
  e: Experiment,
  opts: { seed: number; logFile?: string; onProcessesChanged?: () => void; pin?: boolean },
): LocalLabConfig {
  return {
    host: '127.0.0.1',
    apiPort: 0,
    ...labConfig(e, opts.seed),
    ...(opts.logFile !== undefined ? { logFile: opts.logFile } : {}),
    ...(opts.onProcessesChanged ? { onProcessesChanged: opts.onProcessesChanged } : {}),
    ...(opts.pin !== undefined ? { pin: opts.pin } : {}),
  };
}

/** The api's mitigations as the experiment declares them (lab.api), in the api's terms. */
export function apiMitigations(api: LabSection['api']): Mitigations {
  const shed = api.shed;
  return {
    queue: api.queue,
    ...(api.queueLimit !== undefined ? { queueBound: api.queueLimit } : {}),
    ...(api.concurrencyLimit !== undefined ? { concurrencyLimit: api.concurrencyLimit } : {}),
    ...(shed?.policy === 'queue-time' ? { shedQueueTimeMs: shed.limit } : {}),
    ...(shed?.policy === 'codel' ? { codel: { targetMs: shed.target, intervalMs: shed.interval } } : {}),
    ...(api.deadlineDrop ? { deadlineDrop: true } : {}),
  };
}

/** The api's error cost as the experiment declares it (lab.api.errorCost), in the api's terms. */
export function apiErrorCost(api: LabSection['api']): { errorCost?: ErrorCost } {
  const e = api.errorCost;
  return e ? { errorCost: { work: toDurationDist(e), ...(e.onShed ? { onShed: true } : {}) } } : {};
}

/** The lab's cache and database, and the api's request timeout. */
export function labCacheConfig(lab: LabSection): {
  cache?: LocalCacheConfig;
  requestTimeoutMs?: number;
} {
  return {
    ...(lab.api.requestTimeout !== undefined ? { requestTimeoutMs: lab.api.requestTimeout } : {}),
    ...(lab.cache && lab.db
      ? {
          cache: {
            ttlS: Math.max(1, Math.round(lab.cache.ttl / 1000)),
            prewarm: lab.cache.prewarm,
            keys: lab.db.keys,
            pool: lab.db.pool,
            queryDelay: toDurationDist(lab.db.query),
            ...(lab.db.timeout !== undefined
              ? { retry: { timeoutMs: lab.db.timeout, maxAttempts: lab.db.retry?.maxAttempts ?? 1 } }
              : {}),
          },
        }
      : {}),
  };
}

/** The stub LLM provider and the api's policy toward it; loads the profile (a SpecError names its file and field). */
export function labLlmConfig(lab: LabSection): { llm?: LocalLlmConfig } {
  const l = lab.llm;
  if (!l) return {};
  const profileFile = l.profile === 'default' ? DEFAULT_PROFILE : resolve(l.profile);
  const profile = loadProfile(profileFile);
  return {
    llm: {
      profileFile,
      profileName: profile.name,
      rates: {
        serverError: l.errorRate,
        hang: l.timeoutRate,
        rateLimit: l.rateLimitRate,
        cut: l.cutRate,
        contextLength: l.contextRate,
      },
      slots: l.slots,
      timeoutMs: l.timeout,
      retry: { maxAttempts: l.retry.maxAttempts, baseMs: l.retry.base, capMs: l.retry.cap },
    },
  };
}
