import type { ServerSeries } from '../orchestrator/scrape/scraper.js';
import type { SimApi } from './api.js';
import type { SimClock } from './clock.js';

/**
 * The simulated api's server-side series, read from its own counters at every bucket
 * boundary (nothing is scraped): the same ServerSeries the lab's scraper builds from
 * /metrics, with the same columns (timeseries.csv, server-side amplification). Unlike
 * a scrape, a paused api still has exact buckets (the requests it reads on resume are
 * counted when it reads them, as the lab's next scrape would); the process's CPU and
 * memory have no meaning here and stay empty.
 */
export class SimServerSeries {
  private readonly series: ServerSeries;
  private last: Snapshot | undefined;
  private bucket = 0;
  private stopped = false;
  scrapes = 0;

  constructor(
    private readonly api: SimApi,
    private readonly clock: SimClock,
    private readonly hasCache: boolean,
    private readonly bucketMs = 1000,
  ) {
    this.series = {
      received: [],
      completed: [],
      wasted: [],
      cpuSeconds: [],
      queueDepth: [],
      busyWorkers: [],
      rssBytes: [],
      span: [],
      extra: {},
    };
  }

  start(): void {
    this.last = this.snapshot();
    this.scrapes = 1;
    this.arm();
  }

  private arm(): void {
    const boundary = (this.bucket + 1) * this.bucketMs;
    this.clock.timer(boundary, () => {
      if (this.stopped) return;
      this.take();
      this.bucket++;
      this.arm();
    });
  }

  private take(): void {
    const now = this.snapshot();
    const last = this.last!;
    const s = this.series;
    const i = this.bucket;
    s.received[i] = now.received - last.received;
    s.completed[i] = now.completed - last.completed;
    s.wasted[i] = now.wasted - last.wasted;
    s.cpuSeconds[i] = null;
    s.rssBytes[i] = null;
    s.queueDepth[i] = this.api.queueDepth;
    s.busyWorkers[i] = this.api.busyWorkers;
    s.span[i] = 1;
    const extra = s.extra!;
    for (const k of Object.keys(now.extra)) {
      const col = (extra[k] ??= []);
      while (col.length < i) col.push(0); // a counter that appears later was 0 before
      col[i] = now.extra[k]! - (last.extra[k] ?? 0);
    }
    if (this.hasCache) {
      (extra['db_pool_waiting'] ??= [])[i] = this.api.dbPoolWaiting;
      (extra['db_pool_busy'] ??= [])[i] = this.api.dbPoolBusy;
    }
    this.last = now;
    this.scrapes++;
  }

  /** The counters as the api's /metrics would export them (labelled ones once they exist). */
  private snapshot(): Snapshot {
    const m = this.api.counters;
    const extra: Record<string, number> = {
      cache_hits: m.cacheHits,
      cache_misses: m.cacheMisses,
      cache_fill_errors: m.cacheFillErrors,
      cache_errors: m.cacheErrors,
      timed_out: m.timedOut,
    };
    if (m.dbQueries > 0) extra['db_queries'] = m.dbQueries;
    if (m.dbAttempts > 0) extra['db_attempts'] = m.dbAttempts;
    for (const [reason, n] of Object.entries(m.rejected)) extra[`rejected_${reason}`] = n;
    for (const [kind, ms] of Object.entries(m.errorPathMs)) extra[`error_path_seconds_${kind}`] = ms / 1000;
    return { received: m.received, completed: m.completed, wasted: m.wasted, extra };
  }

  async stop(): Promise<ServerSeries> {
    this.stopped = true;
    const s = this.series;
    const n = s.span.length;
    for (const col of Object.values(s.extra!)) while (col.length < n) col.push(0);
    return s;
  }
}

interface Snapshot {
  readonly received: number;
  readonly completed: number;
  readonly wasted: number;
  readonly extra: Record<string, number>;
}
