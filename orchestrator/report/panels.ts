/**
 * The panels the lab's observers show, defined once: the Grafana dashboard is generated from
 * them (orchestrator/grafana/dashboard.ts, `npm run grafana:dashboard`) and the report's run
 * figures take the names and units of the series they draw from them, so a live panel and a
 * figure of the same quantity read alike.
 *
 * A series has a name (the legend in both), the PromQL Grafana plots (when a metric measures
 * it) and the timeseries.csv columns the report draws it from (when a figure draws it). A
 * family (`each`) is one series per value of a label: `{{reason}}` in Grafana's legend, and
 * `rejected_{reason}` in timeseries.csv (the value with anything but [A-Za-z0-9_] as `_`,
 * as the scraper and the recorder write it).
 *
 * Plain data: the report imports it at run time, the Grafana SDK only the generator.
 */

/**
 * The units the panels are in, in the report's words. The dashboard maps each to Grafana's
 * unit (a unit missing there does not compile).
 */
export type Unit =
  | 'req/s'
  | 'requests per origin'
  | 'ms'
  | 'requests'
  | 'workers'
  | 'connections'
  | 'origins'
  | '%'
  | '% of one core'
  | 'MiB';

export interface Series {
  /**
   * The legend: Grafana's legendFormat, the report's series label. A family's members are
   * `name value` in Grafana (where families share a panel) and the value alone in a figure
   * that draws one family.
   */
  readonly name: string;
  /** Its unit, where it differs from its panel's (same Grafana unit, another noun). */
  readonly unit?: Unit;
  /** What Grafana plots; absent: no metric measures it (the report alone draws it). */
  readonly promql?: string;
  /** The timeseries.csv columns a report figure draws it from; absent: no figure draws it. */
  readonly columns?: readonly string[];
  /** One series per value of this Prometheus label; `{label}` in a column stands for the value. */
  readonly each?: string;
}

export interface Panel {
  readonly title: string;
  readonly description: string;
  /** The value axis: what it measures (its title is `axis (unit)`, or `axis` when its series' units differ). */
  readonly axis: string;
  readonly unit: Unit;
  /** A logarithmic value axis (response times span orders of magnitude). */
  readonly log?: boolean;
  readonly series: readonly Series[];
}

/** The Prometheus rate window: five one-second scrapes (prometheus/prometheus.yml). */
const RATE = '5s';
/** Histogram quantiles over ten scrapes, so a p99 has samples to rank. */
const QUANTILE_RATE = '10s';
const quantile = (q: number, histogram: string): string =>
  `1000 * histogram_quantile(${q}, sum by (le) (rate(${histogram}_bucket[${QUANTILE_RATE}])))`;

/** The series the report's figures draw, by what they are. */
export const SERIES = {
  offered: {
    name: 'offered',
    promql: `rate(metabench_offered_total[${RATE}])`,
    columns: ['offered'],
  },
  attempts: {
    name: 'attempts',
    promql: `rate(metabench_attempts_total[${RATE}])`,
    columns: ['attempts'],
  },
  goodput: {
    name: 'goodput',
    promql: `rate(metabench_goodput_total[${RATE}])`,
    columns: ['goodput'],
  },
  amplificationClient: {
    name: 'client side',
    promql: `rate(metabench_attempts_total[${RATE}]) / rate(metabench_offered_total[${RATE}])`,
    columns: ['amplification_client'],
  },
  amplificationServer: {
    name: 'server side',
    promql: `sum(rate(api_requests_received_total[${RATE}])) / sum(rate(metabench_offered_total[${RATE}]))`,
    columns: ['amplification_server'],
  },
  responseP50: {
    name: 'p50',
    promql: quantile(0.5, 'metabench_response_seconds'),
    columns: ['response_p50_ms'],
  },
  responseP99: {
    name: 'p99',
    promql: quantile(0.99, 'metabench_response_seconds'),
    columns: ['response_p99_ms'],
  },
  // A histogram has no maximum: the report alone draws it.
  responseMax: { name: 'max', columns: ['response_max_ms'] },
  queueDepth: {
    name: 'queue depth',
    unit: 'requests',
    promql: 'api_queue_depth',
    columns: ['server_queue_depth'],
  },
  busyWorkers: {
    name: 'busy workers',
    unit: 'workers',
    promql: 'api_busy_workers',
    columns: ['server_busy_workers'],
  },
  rejected: {
    name: 'rejected',
    each: 'reason',
    promql: `sum by (reason) (rate(api_rejected_total[${RATE}]))`,
    columns: ['rejected_{reason}'],
  },
  failed: {
    name: 'failed',
    each: 'kind',
    // Only the kinds that happen: every kind is exported from the start, at 0.
    promql: `sum by (kind) (rate(metabench_failures_total[${RATE}])) > 0`,
    columns: ['failed_{kind}'],
  },
  cacheHitRatio: {
    name: 'cache hit ratio',
    promql: `100 * rate(api_cache_hits_total[${RATE}]) / (rate(api_cache_hits_total[${RATE}]) + rate(api_cache_misses_total[${RATE}]))`,
    columns: ['cache_hits', 'cache_misses'],
  },
  dbPoolWaiting: {
    name: 'db pool waiting',
    promql: 'api_db_pool_waiting',
    columns: ['db_pool_waiting'],
  },
  cpu: {
    name: '',
    each: 'component',
    promql: `100 * rate(metabench_component_cpu_seconds_total[${RATE}])`,
    columns: ['proc_{component}_cpu'],
  },
  memory: {
    name: '',
    each: 'component',
    promql: 'metabench_component_memory_bytes / 2^20',
    columns: ['proc_{component}_rss_bytes'],
  },
} as const satisfies Record<string, Series>;

/** The units of the series only the report draws (no dashboard panel, so no Grafana unit). */
export type ReportUnit = 'ms/s' | 'collections/s' | 'MiB';

/** A series only the report draws: one timeseries.csv column, in a unit of its own. */
export interface ReportSeries {
  readonly name: string;
  readonly unit: ReportUnit;
  readonly columns: readonly [string];
}

/**
 * The JVM reference server's garbage collection (lab.api.server: jvm; the scraper's
 * jvm_gc_time_seconds_total, jvm_gc_collections_total and jvm_memory_heap_used_bytes). The
 * report alone draws them, in the `gc` figure: the dashboard's Prometheus scrapes the Docker
 * lab, whose api is always the bench's own (a reference server runs on the local runtime
 * only), so no jvm_* series ever reaches it and a panel would stay empty.
 */
export const JVM_SERIES = {
  // A counter's increase per one-second bucket is seconds per second: ×1000 is ms/s.
  gcTime: { name: 'GC time', unit: 'ms/s', columns: ['gc_seconds'] },
  gcCollections: { name: 'collections', unit: 'collections/s', columns: ['gc_collections'] },
  heapUsed: { name: 'heap used', unit: 'MiB', columns: ['heap_used_bytes'] },
} as const satisfies Record<string, ReportSeries>;

/** The dashboard's panels, in order (two a row); their ids are their positions from 1. */
export const PANELS: readonly Panel[] = [
  {
    title: 'Offered vs attempts vs goodput',
    description:
      'Client side, per second: origins offered at their intended time, attempts sent (retries and hedges included), origins that succeeded within their deadline.',
    axis: 'requests per second',
    unit: 'req/s',
    series: [
      SERIES.offered,
      SERIES.attempts,
      SERIES.goodput,
      { name: 'received by the api', promql: `rate(api_requests_received_total[${RATE}])` },
    ],
  },
  {
    title: 'Amplification',
    description: 'Attempts (client side) and requests the api received (server side) per origin offered.',
    axis: 'amplification',
    unit: 'requests per origin',
    series: [SERIES.amplificationClient, SERIES.amplificationServer],
  },
  {
    title: 'Response time percentiles',
    description:
      "Client response time of successful origins (from the intended time), and the api's service time and queue wait.",
    axis: 'response time',
    unit: 'ms',
    log: true,
    series: [
      SERIES.responseP50,
      SERIES.responseP99,
      SERIES.responseMax,
      { name: 'api service p99', promql: quantile(0.99, 'api_service_seconds') },
      { name: 'api queue wait p99', promql: quantile(0.99, 'api_queue_wait_seconds') },
    ],
  },
  {
    title: 'Queue depth and busy workers',
    description: "The api's fixed worker pool: requests waiting, workers busy, pool size.",
    axis: 'requests or workers',
    unit: 'requests',
    series: [
      SERIES.queueDepth,
      SERIES.busyWorkers,
      { name: 'workers', unit: 'workers', promql: 'api_workers' },
    ],
  },
  {
    title: 'Rejections and failures',
    description:
      'Requests the api refused on purpose, by reason (503 x-shed), its request timeouts, and origin failures by kind (client side).',
    axis: 'requests per second',
    unit: 'req/s',
    series: [
      SERIES.rejected,
      { name: 'api timeouts (504)', promql: `rate(api_timed_out_total[${RATE}])` },
      SERIES.failed,
    ],
  },
  {
    title: 'Cache hit ratio',
    description: "Share of the api's cache lookups that hit (misses go to Postgres).",
    axis: 'cache hit ratio',
    unit: '%',
    series: [SERIES.cacheHitRatio],
  },
  {
    title: 'DB pool',
    description: "Requests waiting for one of the api's database connections, and connections in use.",
    axis: 'DB pool',
    unit: 'requests',
    series: [SERIES.dbPoolWaiting, { name: 'db pool busy', unit: 'connections', promql: 'api_db_pool_busy' }],
  },
  {
    title: 'CPU per container',
    description:
      "CPU used by each lab component (its container's processes): 100% is one core busy for the whole second.",
    axis: 'CPU',
    unit: '% of one core',
    series: [
      SERIES.cpu,
      { name: 'api (its own metrics)', promql: `100 * rate(process_cpu_seconds_total{job="api"}[${RATE}])` },
    ],
  },
  {
    title: 'Memory per container',
    description: "Resident memory of each lab component (its container's processes).",
    axis: 'resident memory',
    unit: 'MiB',
    series: [SERIES.memory],
  },
  {
    title: 'Origins in flight',
    description: 'Origins offered and not yet ended (client side).',
    axis: 'in flight',
    unit: 'origins',
    series: [{ name: 'in flight', promql: 'metabench_in_flight' }],
  },
];

/** A value axis's title, as the report prints it: `requests per second (req/s)`. */
export function axisTitle(axis: string, unit: Unit | ReportUnit, note?: string): string {
  return `${axis} (${note ? `${unit}, ${note}` : unit})`;
}

/** The panel a series is drawn in. */
export function panelOf(series: Series): Panel {
  const p = PANELS.find((x) => x.series.includes(series));
  if (!p) throw new Error(`series "${series.name}" is in no panel`);
  return p;
}

/** The unit of a series: its own, else its panel's. */
export function unitOf(series: Series): Unit {
  return series.unit ?? panelOf(series).unit;
}

/** A family's column prefix (`rejected_{reason}` → `rejected_`). */
export function columnPrefix(series: Series): string {
  const c = series.columns?.[0] ?? '';
  const at = c.indexOf('{');
  return at < 0 ? c : c.slice(0, at);
}
