import { z } from 'zod';
import { int } from '../../../foundation/fields.js';

/**
 * lab.api.server: which program plays the api (issue 34, point 4). `builtin` is the bench's
 * own Node api; the others are the reference labs, real servers from Debian's packages
 * (orchestrator/lab/local/reference.ts, docs/lab.md "Reference labs"), each a fixed pool of
 * `workers` whose every request sleeps `work.mean`.
 */
export const API_SERVERS = ['builtin', 'php-fpm', 'gunicorn', 'jvm'] as const;
export type ApiServer = (typeof API_SERVERS)[number];
export const JVM_COLLECTORS = ['serial', 'parallel', 'g1'] as const;

/** lab.api.jvm: the JVM server's memory (the OSDI '22 GC mechanism). */
export const jvmSection = z.strictObject({
  /** The heap bound, -Xms = -Xmx, in MiB. */
  heapMiB: int(16, 65_536),
  /** What each request allocates on receipt and holds until it is answered, in KiB. */
  holdKiB: int(0, 1_048_576),
  /**
   * What each request allocates while it is served and drops at once (parsing, building its
   * answer), in KiB: short-lived garbage, the allocation rate the collector must keep up with.
   */
  churnKiB: int(0, 1_048_576).default(0),
  /** The collector (serial: one thread, all of its time is pause time). */
  collector: z.enum(JVM_COLLECTORS).default('serial'),
});

/** The api fields a reference server is checked against (a structural subset of lab.api). */
interface ApiFields {
  readonly server?: ApiServer | undefined;
  readonly replicas?: number | undefined;
  readonly workers: number;
  readonly work: { readonly dist: string; readonly mean: number };
  readonly costs?: unknown;
  readonly queue: string;
  readonly queueLimit?: number | undefined;
  readonly concurrencyLimit?: number | undefined;
  readonly shed?: unknown;
  readonly deadlineDrop: boolean;
  readonly requestTimeout?: number | undefined;
  readonly errorCost?: unknown;
  readonly jvm?: { readonly heapMiB: number; readonly holdKiB: number } | undefined;
}

/** A field of lab.api (or of lab) a reference server cannot honour, and why. */
export interface ServerIssue {
  /** Path from `lab`. */
  readonly path: (string | number)[];
  readonly message: string;
}

/** Whether lab.api is a reference server rather than the bench's own api. */
export function isReferenceServer(api: { readonly server?: ApiServer | undefined }): boolean {
  return api.server !== undefined && api.server !== 'builtin';
}

/**
 * What a reference server cannot do, refused where it is declared: each is a fixed pool that
 * sleeps a constant S per request, serves its queue in arrival order, and knows none of the
 * bench api's mitigations, costs or dependencies. Only the JVM has a bounded queue.
 */
export function serverIssues(
  api: ApiFields,
  lab: { readonly cache?: unknown; readonly db?: unknown; readonly llm?: unknown },
): ServerIssue[] {
  const out: ServerIssue[] = [];
  const s = api.server;
  if (s === 'jvm' && api.jvm === undefined)
    out.push({
      path: ['api', 'server'],
      message: 'the jvm server needs lab.api.jvm: { heapMiB, holdKiB, churnKiB, collector }',
    });
  if (api.jvm !== undefined && s !== 'jvm')
    out.push({ path: ['api', 'jvm'], message: `applies only to server: jvm (server is ${s ?? 'builtin'})` });
  if (!isReferenceServer(api)) return out;
  const no = (field: string, what: string): void => {
    out.push({ path: ['api', field], message: `the ${s} server has no ${what}` });
  };
  if (api.replicas !== undefined && api.replicas > 1) no('replicas', 'replicas (it runs one instance)');
  if (api.work.dist !== 'constant')
    out.push({
      path: ['api', 'work', 'dist'],
      message: `the ${s} server sleeps the same time for every request: work must be constant (got ${api.work.dist})`,
    });
  if (api.costs !== undefined) no('costs', 'cost classes (every request has the same work)');
  if (api.queue !== 'fifo') no('queue', `${api.queue} queue (it serves its queue in arrival order: fifo)`);
  if (api.queueLimit !== undefined && s !== 'jvm')
    no('queueLimit', 'bounded queue (only the jvm server refuses when its queue is full)');
  if (s === 'jvm' && api.queueLimit === 0)
    out.push({
      path: ['api', 'queueLimit'],
      message: 'the jvm server bounds its queue to at least 1 (leave queueLimit out for an unbounded queue)',
    });
  if (api.concurrencyLimit !== undefined) no('concurrencyLimit', 'concurrency limit');
  if (api.shed !== undefined) no('shed', 'load shedding');
  if (api.deadlineDrop) no('deadlineDrop', 'deadline-aware dropping');
  if (api.requestTimeout !== undefined) no('requestTimeout', 'server-side request timeout');
  if (api.errorCost !== undefined) no('errorCost', 'expensive error path');
  for (const dep of ['cache', 'db', 'llm'] as const)
    if (lab[dep] !== undefined)
      out.push({
        path: [dep],
        message: `the ${s} server reaches no ${dep === 'llm' ? 'LLM provider' : dep === 'db' ? 'database' : 'cache'}: lab.${dep} needs server: builtin`,
      });
  if (s === 'jvm' && api.jvm && api.jvm.holdKiB * 1024 * api.workers > api.jvm.heapMiB * 1024 * 1024)
    out.push({
      path: ['api', 'jvm', 'holdKiB'],
      message: `× workers (${api.jvm.holdKiB * api.workers} KiB) exceeds the heap (${api.jvm.heapMiB} MiB): the pool could never run full`,
    });
  return out;
}
