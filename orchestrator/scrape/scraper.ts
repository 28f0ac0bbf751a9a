import type { Clock } from '../../bench/clock.js';
import type { Component, Lab } from '../lab/Lab.js';
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

export type ServerSeriesName = keyof typeof COUNTERS | keyof typeof GAUGES;
/**
 * One value per bucket; null where no scrape answered (e.g. while the api is paused).
 * `span[i]` is how many buckets the counter increases in bucket i cover: 1 normally,
 * k when the k - 1 scrapes before it failed (ratios must divide by the same k buckets).
 */
export type ServerSeries = Record<ServerSeriesName | 'span', (number | null)[]>;

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
  scrapes = 0;
  failures = 0;

  constructor(
    private readonly lab: Lab,
    private readonly component: Component,
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
    }
    this.last = now;
    this.lastBucket = bucket;
  }

  async stop(): Promise<ServerSeries> {
    this.stopped = true;
    this.halt.abort();
    await this.loop;
    return this.series;
  }
}

function setAt(arr: (number | null)[], i: number, v: number | null): void {
  while (arr.length <= i) arr.push(null);
  arr[i] = v;
}
