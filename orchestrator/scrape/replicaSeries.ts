import type { ServerSource } from '../lab/RuntimePlugin.js';
import type { ServerSeries, ServerSeriesName } from './scraper.js';

/**
 * The server-side series of an api with several replicas. Each replica is scraped (or
 * read, in the simulation) on its own, with the single-api rule: a bucket in which it
 * did not answer is null, and its next answer carries the whole increase since its last
 * one. The summed columns (server_received, server_completed, … and every extra column)
 * are, per bucket, the sum over the replicas that answered in that bucket (null when
 * none did): a paused or killed replica adds nothing to that bucket, neither its counters
 * nor its queue, and its requests are counted when it answers again. A bucket's span is
 * the smallest span among the replicas that answered, so a window that covers whole
 * outages still divides by the buckets it covers.
 *
 * Per-replica columns (`api<i>_received`, `_completed`, `_queue_depth`, `_busy_workers`)
 * are added to the extra columns, each replica's own series as scraped.
 */

const SUMMED: readonly ServerSeriesName[] = [
  'received',
  'completed',
  'wasted',
  'cpuSeconds',
  'queueDepth',
  'busyWorkers',
  'rssBytes',
];
/** The per-replica columns and the series each copies. */
const PER_REPLICA: readonly [string, ServerSeriesName][] = [
  ['received', 'received'],
  ['completed', 'completed'],
  ['queue_depth', 'queueDepth'],
  ['busy_workers', 'busyWorkers'],
];

/** The sum of `xs` over its numbers; null when there is none. */
function sumOf(xs: readonly (number | null | undefined)[]): number | null {
  let sum: number | null = null;
  for (const x of xs) if (x !== null && x !== undefined) sum = (sum ?? 0) + x;
  return sum;
}

/** The replicas' series combined: summed columns, and each replica's own (see above). */
export function sumReplicaSeries(replicas: readonly ServerSeries[]): ServerSeries {
  const buckets = Math.max(0, ...replicas.map((r) => r.span.length));
  const answered = (i: number): ServerSeries[] =>
    replicas.filter((r) => r.span[i] !== null && r.span[i] !== undefined);
  const out = { span: [] } as unknown as ServerSeries;
  for (const k of SUMMED) out[k] = [];
  const extraCols = [...new Set(replicas.flatMap((r) => Object.keys(r.extra ?? {})))];
  const extra: Record<string, (number | null)[]> = {};
  for (const c of extraCols) extra[c] = [];
  for (let i = 0; i < buckets; i++) {
    const on = answered(i);
    out.span.push(on.length > 0 ? Math.min(...on.map((r) => r.span[i]!)) : null);
    for (const k of SUMMED) out[k].push(sumOf(on.map((r) => r[k][i])));
    for (const c of extraCols) extra[c]!.push(sumOf(on.map((r) => r.extra?.[c]?.[i])));
  }
  replicas.forEach((r, n) => {
    for (const [col, k] of PER_REPLICA)
      extra[`api${n}_${col}`] = Array.from({ length: buckets }, (_, i) => r[k][i] ?? null);
  });
  out.extra = extra;
  return out;
}

/** One ServerSource over each replica's own: started and stopped together, their series summed. */
export function replicaServerSource(sources: readonly ServerSource[]): ServerSource {
  if (sources.length === 1) return sources[0]!;
  return {
    start: () => sources.forEach((s) => s.start()),
    stop: async () => sumReplicaSeries(await Promise.all(sources.map((s) => s.stop()))),
    // The series is usable when at least one replica's is (a replica killed for good has few).
    get scrapes() {
      return Math.max(...sources.map((s) => s.scrapes));
    },
  };
}
