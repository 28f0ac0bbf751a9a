import type { Clock } from '../../foundation/clock.js';
import type { Lab, Target } from '../lab/Lab.js';
import { parsePrometheusText } from './prometheusText.js';

/** Counters whose per-bucket increase we keep, and gauges whose value we keep. */
const COUNTERS = {
  received: 'api_requests_received_total',
  completed: 'api_requests_completed_total',
  wasted: 'api_wasted_work_total',
  cpuSeconds: 'process_cpu_seconds_total',
} as const;
const GAUGES = {
  queueDepth: 'api_queue_depth',
  busyWorkers: 'api_busy_workers',
  rssBytes: 'process_resident_memory_bytes',
} as const;

/**
 * Optional series, present only when the service exports them; each becomes a
 * timeseries.csv column of that name. Labelled counters give one column per label
 * value (`rejected_<reason>`).
 */
const EXTRA_COUNTERS = {
  cache_hits: 'api_cache_hits_total',
  cache_misses: 'api_cache_misses_total',
  cache_fill_errors: 'api_cache_fill_errors_total',
  db_queries: 'api_db_queries_total',
  cache_errors: 'api_cache_errors_total',
  timed_out: 'api_timed_out_total',
  llm_calls: 'api_llm_calls_total',
  llm_attempts: 'api_llm_attempts_total',
} as const;
const EXTRA_GAUGES = {
  db_pool_waiting: 'api_db_pool_waiting',
  db_pool_busy: 'api_db_pool_busy',
  llm_streams_open: 'api_llm_streams_open',
  llm_slots_busy: 'api_llm_slots_busy',
  llm_queue_depth: 'api_llm_queue_depth',
} as const;
const LABELLED_COUNTERS = [
  { metric: 'api_rejected_total', label: 'reason', prefix: 'rejected_' },
  { metric: 'api_client_abandoned_total', label: 'route', prefix: 'client_abandoned_' },
  { metric: 'api_llm_upstream_aborted_total', label: 'route', prefix: 'llm_aborted_' },
  { metric: 'api_error_path_seconds_total', label: 'kind', prefix: 'error_path_seconds_' },
] as const;

export type ServerSeriesName = keyof typeof COUNTERS | keyof typeof GAUGES;
/**
 * One value per bucket; null where no scrape answered (e.g. while the api is paused).
 * `span[i]` is how many buckets the counter increases in bucket i cover: 1 normally,
 * k when the k - 1 scrapes before it failed (ratios must divide by the same k buckets).
 */
export type ServerSeries = Record<ServerSeriesName | 'span', (number | null)[]> & {
  /** The optional columns the service exported, by column name. */
  extra?: Record<string, (number | null)[]>;
};

/** Column name → counter sample key, for the labelled counters present in `now`. */
function labelledCounterKeys(now: Map<string, number>): [string, string][] {
  const out: [string, string][] = [];
  for (const key of now.keys())
    for (const l of LABELLED_COUNTERS) {
      if (!key.startsWith(`${l.metric}{`)) continue;
      const m = new RegExp(`${l.label}="([^"]*)"`).exec(key);
      if (m?.[1]) out.push([`${l.prefix}${m[1].replace(/[^a-z0-9_]/gi, '_')}`, key]);
    }
  return out;
}

/**
 * Scrapes a component's /metrics once per bucket boundary. A counter's increase since
 * the previous successful scrape is put in the bucket that ends at this scrape; while
 * the component does not answer, its buckets stay null and the next answer carries
 * the whole increase (requests a paused api reads on resume belong to that moment).
 */
export class Scraper {
  private readonly series: ServerSeries;
  private last: Map<string, number> | undefined;
  private lastBucket = -1;
  private stopped = false;
  private readonly halt = new AbortController();
  private loop: Promise<void> | undefined;
  private readonly counterCols = new Set<string>();
  scrapes = 0;
  failures = 0;

  constructor(
    private readonly lab: Lab,
    /** `api`, or one api replica `api[i]` (each replica has a Scraper of its own). */
    private readonly component: Target,
    private readonly clock: Clock,
    private readonly bucketMs = 1000,
  ) {
    this.series = {} as ServerSeries;
    for (const k of [...Object.keys(COUNTERS), ...Object.keys(GAUGES), 'span'])
      this.series[k as ServerSeriesName] = [];
  }

  start(): void {
    this.loop = this.run();
  }

  private async run(): Promise<void> {
    // A baseline scrape at t = 0 so the first bucket's increase is measured, not guessed.
    await this.scrapeOnce(-1);
    for (let boundary = this.bucketMs; !this.stopped; boundary += this.bucketMs) {
      await this.clock.sleepUntil(boundary, this.halt.signal);
      if (this.stopped) break;
      if (this.clock.now() > boundary + this.bucketMs) continue; // fell behind: skip, never misattribute
      await this.scrapeOnce(boundary / this.bucketMs - 1);
    }
  }

  private async scrapeOnce(bucket: number): Promise<void> {
    let text: string;
    try {
      text = await this.lab.scrapeText(this.component, Math.min(this.bucketMs * 0.8, 800));
    } catch {
      this.failures++;
      return;
    }
    this.scrapes++;
    const now = parsePrometheusText(text);
    if (bucket >= 0 && this.last) {
      // A counter not exported yet (a labelled series before its first increment) is 0.
      for (const [k, metric] of Object.entries(COUNTERS))
        setAt(
          this.series[k as ServerSeriesName],
          bucket,
          Math.max(0, (now.get(metric) ?? 0) - (this.last.get(metric) ?? 0)),
        );
      for (const [k, metric] of Object.entries(GAUGES))
        setAt(this.series[k as ServerSeriesName], bucket, now.get(metric) ?? null);
      setAt(this.series.span, bucket, bucket - this.lastBucket);
      const extra = (this.series.extra ??= {});
      const counters: [string, string][] = [
        ...Object.entries(EXTRA_COUNTERS).filter(([, metric]) => now.has(metric)),
        ...labelledCounterKeys(now),
      ];
      for (const [col, key] of counters) {
        // A counter that appears later was 0 in every earlier answered bucket.
        if (!extra[col]) this.counterCols.add(col);
        setAt((extra[col] ??= []), bucket, Math.max(0, (now.get(key) ?? 0) - (this.last.get(key) ?? 0)));
      }
      for (const [col, metric] of Object.entries(EXTRA_GAUGES))
        if (now.has(metric)) setAt((extra[col] ??= []), bucket, now.get(metric) ?? null);
    }
    this.last = now;
    this.lastBucket = bucket;
  }

  async stop(): Promise<ServerSeries> {
    this.stopped = true;
    this.halt.abort();
    await this.loop;
    const extra = this.series.extra;
    if (extra)
      for (const col of this.counterCols) {
        const arr = extra[col]!;
        this.series.span.forEach((span, i) => {
          if (span !== null && (arr[i] === undefined || arr[i] === null)) arr[i] = 0;
        });
      }
    return this.series;
  }
}

function setAt(arr: (number | null)[], i: number, v: number | null): void {
  while (arr.length <= i) arr.push(null);
  arr[i] = v;
}
