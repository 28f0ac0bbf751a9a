import { BenchError } from '../../../foundation/errors.js';
import type { Log } from './referenceProcess.js';

/** The reference labs: real servers from Debian's packages, with their work declared (issue 34). */
export const REFERENCE_KINDS = ['php-fpm', 'gunicorn', 'jvm'] as const;
export type ReferenceKind = (typeof REFERENCE_KINDS)[number];

export const JVM_COLLECTORS = ['serial', 'parallel', 'g1'] as const;
export type JvmCollector = (typeof JVM_COLLECTORS)[number];

/** The JVM service's memory: what each request holds and what the heap may hold. */
export interface JvmOptions {
  /** -Xmx, in MiB. */
  readonly heapMb: number;
  readonly collector: JvmCollector;
  /** Bytes each request allocates when it is received and keeps until it is answered. */
  readonly allocBytes: number;
  /** Bytes each request allocates while it is served and drops at once (short-lived garbage); absent: 0. */
  readonly churnBytes?: number;
  /** Requests that may wait for a thread; beyond it, 503 at once. Absent: unbounded. */
  readonly queue?: number;
}

export interface ReferenceOptions {
  readonly kind: ReferenceKind;
  /** c: php-fpm's static children, gunicorn's sync workers, the JVM pool's threads. */
  readonly workers: number;
  /** S: each request's sleep, ms. */
  readonly workMs: number;
  /** CPU burnt before the sleep, ms (default 0): capacity is then bounded by the cores too. */
  readonly cpuMs?: number;
  /** The port the load goes to; 0 or absent: a free one. */
  readonly port?: number;
  /** gunicorn's and the JVM's metrics port (php-fpm's status page is on `port`); 0 or absent: a free one. */
  readonly metricsPort?: number;
  /** Required for `jvm`. */
  readonly jvm?: JvmOptions;
  readonly log?: Log;
}

/** A running reference server. */
export interface ReferenceServer {
  readonly kind: ReferenceKind;
  /** Where the load goes: every path but /health is one request of declared work. */
  readonly url: string;
  readonly healthUrl: string;
  /** The server's own metrics: FPM's status page (JSON), or Prometheus text. */
  readonly metricsUrl: string;
  /** c / S, requests per second (S = workMs + cpuMs). */
  readonly predictedCapacityPerS: number;
  /** The processes' roots (the guards), for a caller that journals them. */
  readonly pids: readonly number[];
  /** Its temporary directory (configuration, sockets, metrics files), if it has one. */
  readonly tempDir?: string;
  /**
   * The server-side series in the bench's names (api_requests_received_total,
   * api_requests_completed_total, api_queue_depth, api_busy_workers, as
   * orchestrator/scrape/scraper.ts reads them), plus the server's own figures.
   */
  scrapeText(timeoutMs?: number): Promise<string>;
  /** Stops every process of it and removes its temporary directory. */
  stop(): Promise<void>;
}

/** Nominal capacity of a fixed pool: c / S. */
export function predictedCapacityPerS(workers: number, workMs: number, cpuMs = 0): number {
  return workers / ((workMs + cpuMs) / 1000);
}

const isPort = (p: number | undefined): boolean =>
  p === undefined || (Number.isInteger(p) && p >= 0 && p <= 65535);

/** Refuses options that could never give a server of predictable capacity (E_USAGE, exit 2). */
export function checkReferenceOptions(o: ReferenceOptions): void {
  const bad = (field: string, why: string): never => {
    throw new BenchError('E_USAGE', `reference ${o.kind} server: ${field} ${why}`);
  };
  if (!REFERENCE_KINDS.includes(o.kind)) bad('kind', `must be one of ${REFERENCE_KINDS.join(', ')}`);
  if (!(Number.isInteger(o.workers) && o.workers >= 1 && o.workers <= 1024))
    bad('workers', `must be a whole number from 1 to 1024 (got ${o.workers})`);
  if (!(Number.isFinite(o.workMs) && o.workMs >= 0)) bad('workMs', `must be 0 or more (got ${o.workMs})`);
  const cpu = o.cpuMs ?? 0;
  if (!(Number.isFinite(cpu) && cpu >= 0)) bad('cpuMs', `must be 0 or more (got ${cpu})`);
  if (o.workMs + cpu <= 0)
    bad('workMs', 'and cpuMs are both 0: the work must be declared for capacity to be predicted');
  if (!isPort(o.port)) bad('port', `must be a port number (got ${o.port})`);
  if (!isPort(o.metricsPort)) bad('metricsPort', `must be a port number (got ${o.metricsPort})`);
  if (o.port && o.metricsPort && o.port === o.metricsPort) bad('metricsPort', 'must differ from port');
  if (o.kind === 'jvm') {
    const j = o.jvm;
    if (!j) return bad('jvm', 'is required (heapMb, collector, allocBytes)');
    if (!(Number.isInteger(j.heapMb) && j.heapMb >= 16))
      bad('jvm.heapMb', `must be a whole number of at least 16 (got ${j.heapMb})`);
    if (!JVM_COLLECTORS.includes(j.collector))
      bad('jvm.collector', `must be one of ${JVM_COLLECTORS.join(', ')}`);
    if (!(Number.isInteger(j.allocBytes) && j.allocBytes >= 0))
      bad('jvm.allocBytes', `must be a whole number of bytes (got ${j.allocBytes})`);
    if (j.allocBytes * o.workers > j.heapMb * 1024 * 1024)
      bad(
        'jvm.allocBytes',
        `× workers (${j.allocBytes * o.workers} bytes) exceeds the heap (${j.heapMb} MiB): the pool could never run full`,
      );
    const churn = j.churnBytes ?? 0;
    if (!(Number.isInteger(churn) && churn >= 0))
      bad('jvm.churnBytes', `must be a whole number of bytes (got ${churn})`);
    if (j.queue !== undefined && !(Number.isInteger(j.queue) && j.queue >= 1))
      bad('jvm.queue', `must be a whole number of at least 1, or absent for unbounded (got ${j.queue})`);
  } else if (o.jvm) bad('jvm', 'applies only to the jvm server');
}
