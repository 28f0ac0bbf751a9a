import type { Clock } from '../../foundation/clock.js';
import type { Lab, Target } from '../lab/Lab.js';
import { PartialScrapeError } from '../lab/partialScrape.js';
import { STUB_ERROR_KINDS } from '../../services/llm-stub/outcomes.js';
import { parsePrometheusText, type Samples } from './prometheusText.js';
import { MAPPED_COLUMNS, type SystemMetrics } from '../spec/sections/system.js';

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
  db_attempts: 'api_db_attempts_total',
  cache_errors: 'api_cache_errors_total',
  timed_out: 'api_timed_out_total',
  llm_calls: 'api_llm_calls_total',
  llm_attempts: 'api_llm_attempts_total',
  // The JVM reference server (lab.api.server: jvm), from its MXBeans: GC seconds per bucket
  // is GC time per second, the OSDI '22 mechanism's sustaining figure.
  gc_seconds: 'jvm_gc_time_seconds_total',
  gc_collections: 'jvm_gc_collections_total',
} as const;
const EXTRA_GAUGES = {
  db_pool_waiting: 'api_db_pool_waiting',
  db_pool_busy: 'api_db_pool_busy',
  llm_streams_open: 'api_llm_streams_open',
  llm_slots_busy: 'api_llm_slots_busy',
  llm_queue_depth: 'api_llm_queue_depth',
  heap_used_bytes: 'jvm_memory_heap_used_bytes',
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
 * What a bucket's columns are is the subclass's (`record`).
 */
abstract class BucketScraper<S> {
  private last: Map<string, number> | undefined;
  private lastBucket = -1;
  private stopped = false;
  private readonly halt = new AbortController();
  private loop: Promise<void> | undefined;
  scrapes = 0;
  failures = 0;

  constructor(
    private readonly lab: Lab,
    /** `api`, or one api replica `api[i]` (each replica has a Scraper of its own). */
    private readonly component: Target,
    private readonly clock: Clock,
    private readonly bucketMs = 1000,
  ) {}

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
    } catch (err) {
      this.failures++;
      if (err instanceof PartialScrapeError) this.partial(parsePrometheusText(err.text), bucket);
      return;
    }
    this.scrapes++;
    const now = parsePrometheusText(text);
    if (bucket >= 0 && this.last) this.record(now, this.last, bucket, bucket - this.lastBucket);
    this.last = now;
    this.lastBucket = bucket;
  }

  /**
   * Part of the series answered (PartialScrapeError): those present are recorded against
   * their own last values and remembered; the bucket stays unanswered otherwise (no span),
   * so the next full answer carries the others' whole increase, as after a failure.
   */
  private partial(now: Samples, bucket: number): void {
    if (!this.last) return;
    if (bucket >= 0) this.recordPartial(now, this.last, bucket);
    this.last = new Map([...this.last, ...now]);
  }

  /** A partial answer's series, where the subclass keeps any (default: none). */
  protected recordPartial(_now: Samples, _last: Samples, _bucket: number): void {}

  /** Bucket `bucket`'s values from this scrape and the previous answered one, `span` buckets before. */
  protected abstract record(now: Samples, last: Samples, bucket: number, span: number): void;

  protected abstract series(): S;

  async stop(): Promise<S> {
    this.stopped = true;
    this.halt.abort();
    await this.loop;
    return this.series();
  }
}

/** A counter's increase between two scrapes (a counter not exported yet, e.g. a labelled series before its first increment, is 0). */
function increase(now: Samples, last: Samples, key: string): number {
  return Math.max(0, (now.get(key) ?? 0) - (last.get(key) ?? 0));
}

/**
 * Which series hold the columns of a system metabench did not write (system.metrics): a
 * column left out stays empty (null in every bucket).
 */
export type SeriesMapping = { readonly [K in ServerSeriesName]?: string | undefined };

/** A system's metrics mapping (system.metrics) in the scraper's column names. */
export function systemSeries(m: SystemMetrics): SeriesMapping {
  return Object.fromEntries(
    (Object.keys(MAPPED_COLUMNS) as (keyof typeof MAPPED_COLUMNS)[]).map((k) => [MAPPED_COLUMNS[k], m[k]]),
  ) as SeriesMapping;
}

/**
 * The api's series (its required columns and the optional ones it exports); or, with a
 * mapping, a system's: each column from the series the mapping names, no optional ones.
 */
export class Scraper extends BucketScraper<ServerSeries> {
  private readonly out: ServerSeries;
  private readonly counterCols = new Set<string>();

  constructor(
    lab: Lab,
    component: Target,
    clock: Clock,
    bucketMs = 1000,
    private readonly mapping?: SeriesMapping,
  ) {
    super(lab, component, clock, bucketMs);
    this.out = {} as ServerSeries;
    for (const k of [...Object.keys(COUNTERS), ...Object.keys(GAUGES), 'span'])
      this.out[k as ServerSeriesName] = [];
  }

  protected override record(now: Samples, last: Samples, bucket: number, span: number): void {
    if (this.mapping) {
      const m = this.mapping;
      for (const k of Object.keys(COUNTERS) as ServerSeriesName[]) {
        const key = m[k];
        setAt(this.out[k], bucket, key === undefined || !now.has(key) ? null : increase(now, last, key));
      }
      for (const k of Object.keys(GAUGES) as ServerSeriesName[]) {
        const key = m[k];
        setAt(this.out[k], bucket, key === undefined ? null : (now.get(key) ?? null));
      }
      setAt(this.out.span, bucket, span);
      return;
    }
    for (const [k, metric] of Object.entries(COUNTERS))
      setAt(this.out[k as ServerSeriesName], bucket, increase(now, last, metric));
    for (const [k, metric] of Object.entries(GAUGES))
      setAt(this.out[k as ServerSeriesName], bucket, now.get(metric) ?? null);
    setAt(this.out.span, bucket, span);
    const extra = (this.out.extra ??= {});
    const counters: [string, string][] = [
      ...Object.entries(EXTRA_COUNTERS).filter(([, metric]) => now.has(metric)),
      ...labelledCounterKeys(now),
    ];
    for (const [col, key] of counters) {
      // A counter that appears later was 0 in every earlier answered bucket.
      if (!extra[col]) this.counterCols.add(col);
      setAt((extra[col] ??= []), bucket, increase(now, last, key));
    }
    for (const [col, metric] of Object.entries(EXTRA_GAUGES))
      if (now.has(metric)) setAt((extra[col] ??= []), bucket, now.get(metric) ?? null);
  }

  /** Only the optional counters a partial answer holds (the JVM's GC series from its log). */
  protected override recordPartial(now: Samples, last: Samples, bucket: number): void {
    if (this.mapping) return;
    const extra = (this.out.extra ??= {});
    for (const [col, metric] of Object.entries(EXTRA_COUNTERS))
      if (now.has(metric)) {
        if (!extra[col]) this.counterCols.add(col);
        setAt((extra[col] ??= []), bucket, increase(now, last, metric));
      }
  }

  protected override series(): ServerSeries {
    const extra = this.out.extra;
    if (extra)
      for (const col of this.counterCols) {
        const arr = extra[col]!;
        this.out.span.forEach((span, i) => {
          if (span !== null && (arr[i] === undefined || arr[i] === null)) arr[i] = 0;
        });
      }
    return this.out;
  }
}

/** The LLM provider's metric names (services/llm-stub/metrics.ts). */
const PROVIDER_REQUESTS = 'llm_stub_requests_total';
const PROVIDER_TOKENS = 'llm_stub_output_tokens_total';

/** The provider's timeseries.csv columns (docs/metrics.md). */
export const PROVIDER_COLUMNS: readonly string[] = [
  'llm_provider_requests',
  ...STUB_ERROR_KINDS.map((k) => `llm_provider_errors_${k}`),
  'llm_provider_cancelled',
  'llm_provider_tokens',
];

/**
 * The LLM provider's series, scraped from the stub's own /metrics (not through its link,
 * so a fault on the link leaves the measurement alone), as fixed columns: every one is
 * in the run's timeseries.csv whenever the lab has the provider, null where it did not
 * answer (killed, paused). Per bucket:
 *   llm_provider_requests        model requests the provider ended, any outcome
 *   llm_provider_errors_<kind>   of which failed, by kind (STUB_ERROR_KINDS)
 *   llm_provider_cancelled       of which its client left first (the api cancelled the call)
 *   llm_provider_tokens          content tokens sent: tokens per second
 */
export class ProviderScraper extends BucketScraper<Record<string, (number | null)[]>> {
  private readonly out: Record<string, (number | null)[]> = Object.fromEntries(
    PROVIDER_COLUMNS.map((c) => [c, []]),
  );

  constructor(lab: Lab, clock: Clock, bucketMs = 1000) {
    super(lab, 'llm', clock, bucketMs);
  }

  protected override record(now: Samples, last: Samples, bucket: number): void {
    const byOutcome = new Map<string, number>();
    for (const key of now.keys()) {
      if (!key.startsWith(`${PROVIDER_REQUESTS}{`)) continue;
      const outcome = /outcome="([^"]*)"/.exec(key)?.[1];
      if (outcome) byOutcome.set(outcome, (byOutcome.get(outcome) ?? 0) + increase(now, last, key));
    }
    setAt(this.out['llm_provider_requests']!, bucket, increase(now, last, PROVIDER_REQUESTS));
    for (const kind of STUB_ERROR_KINDS)
      setAt(this.out[`llm_provider_errors_${kind}`]!, bucket, byOutcome.get(kind) ?? 0);
    setAt(this.out['llm_provider_cancelled']!, bucket, byOutcome.get('client_gone') ?? 0);
    setAt(this.out['llm_provider_tokens']!, bucket, increase(now, last, PROVIDER_TOKENS));
  }

  protected override series(): Record<string, (number | null)[]> {
    return this.out;
  }
}

function setAt(arr: (number | null)[], i: number, v: number | null): void {
  while (arr.length <= i) arr.push(null);
  arr[i] = v;
}
