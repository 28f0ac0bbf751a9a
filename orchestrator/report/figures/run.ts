import type { RunSummary } from '../../analysis/summary.js';
import { columnsWithPrefix, hasData, numbers, type RunData, type Timeseries } from '../load.js';
import type { VlSpec } from '../svg.js';
import { GC_SHARE } from '../../analysis/mechanisms.js';
import { axisTitle, columnPrefix, JVM_SERIES, SERIES, unitOf, type Series } from '../panels.js';
import {
  annotationLayers,
  document,
  legendRule,
  markerRule,
  phaseBands,
  phaseLayers,
  phaseNotes,
  referenceRule,
  ZERO_PADDING_PX,
  rounded,
  seriesEncoding,
  TIME_AXIS,
  timeLinesLayer,
  triggerLayers,
  triggerNote,
  type Annotation,
  type Figure,
  type LegendLine,
  type PhaseBand,
  type Row,
  type TimeWindow,
} from './common.js';

/**
 * The figures of one run, drawn from its timeseries.csv and summary.json. A figure
 * appears only when its columns are present and measured:
 *
 *   throughput     offered, attempts, goodput                       (always)
 *   amplification  amplification_client, amplification_server       (always)
 *   latency        response_p50_ms, response_p99_ms, response_max_ms (always)
 *   failures       failed_<kind>                                    (when any failed)
 *   rejections     rejected_<reason>                                (server rejections by reason)
 *   server         server_queue_depth, server_busy_workers (with api replicas: also each
 *                  replica's api<i>_queue_depth, api<i>_busy_workers, and server_received,
 *                  server_completed with each replica's api<i>_received, api<i>_completed)
 *   cache          cache_hit_ratio, or cache_hit* / cache_miss* counts
 *   gc             gc_seconds, gc_collections, heap_used_bytes (the JVM reference server)
 *   db             db_pool_waiting* (requests waiting for a DB connection)
 *   breaker        breaker_* (state as a number or a name, and breaker counters)
 *   llm            open_connections, llm_streams_open, amplification_llm (an LLM lab)
 *   processes      proc_<name>_cpu (CPU seconds in the bucket), proc_<name>_rss_bytes;
 *                  without those, the api's server_cpu_seconds / server_rss_bytes
 *
 * Buckets are one second: a count per bucket is a rate per second. The figures end with
 * the observation window: the drain after it (no load offered, its last second partial)
 * would read as a collapse; timeseries.csv keeps it.
 */
export function runFigures(run: RunData, prefix: string): Figure[] {
  const ts = withoutDrain(run.series);
  if (ts.rows === 0) return [];
  const trigger =
    run.summary.trigger.applied === false
      ? null
      : { startS: run.summary.trigger.startS, endS: run.summary.trigger.endS };
  const ctx: Ctx = {
    ts,
    s: run.summary,
    id: (name) => `${prefix}${name}`,
    // A trigger the run never reached is not drawn (nothing after it was measured).
    trigger,
    domainS: [0, ((numbers(ts, 't_s').at(-1) ?? 0) as number) + 1],
    runLabel: prefix ? ` (run ${run.index})` : '',
    // A trigger never reached is not shaded (nothing after it was measured).
    bands: phaseBands(numbers(ts, 't_s'), ts.col.get('phase') ?? []).filter(
      (b) => b.phase !== 'trigger' || trigger !== null,
    ),
  };
  return [
    throughput(ctx),
    amplification(ctx),
    latency(ctx),
    stacked(
      ctx,
      'failures',
      columnPrefix(SERIES.failed),
      'Failed origin requests by kind',
      axisTitle('failed origins', unitOf(SERIES.failed)),
    ),
    stacked(
      ctx,
      'rejections',
      columnPrefix(SERIES.rejected),
      'Rejections by reason',
      axisTitle('rejected requests', unitOf(SERIES.rejected)),
    ),
    server(ctx),
    gc(ctx),
    cache(ctx),
    db(ctx),
    breaker(ctx),
    llm(ctx),
    processes(ctx),
  ].filter((f): f is Figure => f !== null);
}

interface Ctx {
  readonly ts: Timeseries;
  readonly s: RunSummary;
  readonly id: (name: string) => string;
  readonly trigger: TimeWindow | null;
  readonly domainS: readonly [number, number];
  readonly runLabel: string;
  /** The run's phases from timeseries.csv's `phase` column (none in an older file: the trigger alone is shaded). */
  readonly bands: readonly PhaseBand[];
}

/** The timeseries without its drain rows (after the observation window). */
export function withoutDrain(ts: Timeseries): Timeseries {
  const phase = ts.col.get('phase');
  if (!phase) return ts;
  const keep = phase.map((p) => p !== 'drain');
  if (keep.every(Boolean)) return ts;
  const col = new Map<string, readonly (number | string | null)[]>();
  for (const [k, v] of ts.col)
    col.set(
      k,
      v.filter((_, i) => keep[i]),
    );
  return { columns: ts.columns, rows: keep.filter(Boolean).length, col };
}

/** The phases shaded (or, without a phase column, the trigger window). */
function shading(c: Ctx): VlSpec[] {
  return c.bands.length > 0 ? phaseLayers(c.bands) : triggerLayers(c.trigger);
}

/** The labels of the shading, above the plot. */
function shadingNotes(c: Ctx): Annotation[] {
  return c.bands.length > 0 ? phaseNotes(c.bands) : triggerNote(c.trigger);
}

/** Marks over a figure's lines: layers drawn in the plot, labels above it, reference lines in the legend. */
interface Overlay {
  readonly layers?: readonly VlSpec[];
  readonly notes?: readonly Annotation[];
  readonly references?: readonly LegendLine[];
}

interface SeriesDef {
  readonly label: string;
  readonly values: readonly (number | null)[];
}

/** A series of the panel definition (orchestrator/report/panels.ts) from its one column. */
function drawn(c: Ctx, s: Series): SeriesDef {
  return { label: s.name, values: numbers(c.ts, s.columns?.[0] ?? '') };
}

function longRows(ts: Timeseries, defs: readonly SeriesDef[]): Row[] {
  const t = numbers(ts, 't_s');
  const rows: Row[] = [];
  for (const d of defs)
    d.values.forEach((v, i) => rows.push({ t_s: t[i] ?? i, series: d.label, value: rounded(v) }));
  return rows;
}

/** Lines over time with the trigger shaded, plus extra layers (markers, references). */
function linesFigure(
  c: Ctx,
  name: string,
  title: string,
  caption: string,
  defs: readonly SeriesDef[],
  yTitle: string,
  extra: Overlay = {},
  opts: { log?: boolean; step?: boolean } = {},
): Figure | null {
  // Nothing measured at all (no success in the whole run): no figure, rather than an empty frame.
  if (!defs.some((d) => d.values.some((v) => v !== null))) return null;
  const data = longRows(c.ts, defs);
  const labels = defs.map((d) => d.label);
  return {
    id: c.id(name),
    title: title + c.runLabel,
    caption,
    data,
    series: labels,
    spec: document(title + c.runLabel, {
      layer: [
        ...shading(c),
        timeLinesLayer(data, labels, yTitle, {
          domainS: c.domainS,
          references: extra.references ?? [],
          ...opts,
        }),
        ...(extra.layers ?? []),
        ...annotationLayers([...shadingNotes(c), ...(extra.notes ?? [])], c.domainS),
      ],
    }),
  };
}

/** The recovery point when recovered; the recovery deadline otherwise (if it lies in the plot). */
function recoveryMarker(c: Ctx): Overlay {
  const s = c.s;
  // No recovery marker for a trigger never reached, nor for an invalid run (no verdict).
  if (c.trigger === null || s.outcome === 'invalid') return {};
  if (s.recovered && s.recoveryTimeS !== null) {
    const x = rounded(s.trigger.endS + s.recoveryTimeS)!;
    return { layers: [markerRule(x)], notes: [{ x, label: `recovered after ${s.recoveryTimeS} s` }] };
  }
  const deadline = rounded(s.trigger.endS + s.recoveryDeadlineS)!;
  if (deadline <= c.domainS[1])
    return {
      layers: [markerRule(deadline, { dashed: true })],
      notes: [{ x: deadline, label: 'recovery deadline: not recovered' }],
    };
  return {};
}

/**
 * The api's capacity as horizontal rules named in the legend: the nominal one (workers /
 * mean work) and, when this lab was calibrated, the measured one. An older summary without them: none.
 */
export function capacityRules(s: RunSummary): Overlay {
  const cap = (s as Partial<RunSummary>).capacity;
  if (!cap) return {};
  const rules: [number, LegendLine][] = [];
  if (cap.nominalPerS !== null && cap.nominalPerS > 0)
    rules.push([rounded(cap.nominalPerS)!, { label: `capacity ${rounded(cap.nominalPerS)}/s (nominal)` }]);
  if (cap.measuredPerS !== null && cap.measuredPerS !== undefined && cap.measuredPerS > 0)
    rules.push([
      rounded(cap.measuredPerS)!,
      { label: `capacity ${rounded(cap.measuredPerS)}/s (measured)`, dashed: true },
    ]);
  return { layers: rules.map(([y, line]) => legendRule(y, line)), references: rules.map(([, line]) => line) };
}

function throughput(c: Ctx): Figure | null {
  return linesFigure(
    c,
    'throughput',
    'Offered load, attempts and goodput',
    "Origin requests offered (by intended time), attempts sent and goodput (origins that succeeded within their deadline, by completion time) per second, against the api's capacity (horizontal rule: nominal, and measured when the lab was calibrated); the phases are shaded (warm-up, baseline, trigger, observation), and the recovery point (or the recovery deadline) is marked. The axis reaches just below 0 so a goodput of 0 stays visible.",
    [drawn(c, SERIES.offered), drawn(c, SERIES.attempts), drawn(c, SERIES.goodput)],
    axisTitle('requests per second', unitOf(SERIES.offered)),
    merge(capacityRules(c.s), recoveryMarker(c)),
  );
}

function merge(...os: Overlay[]): Overlay {
  return {
    layers: os.flatMap((o) => o.layers ?? []),
    notes: os.flatMap((o) => o.notes ?? []),
    references: os.flatMap((o) => o.references ?? []),
  };
}

function amplification(c: Ctx): Figure | null {
  return linesFigure(
    c,
    'amplification',
    'Amplification, client and server side',
    'Attempts sent (client side) and requests the api received (server side) per origin intended, per second; 1 at rest. Gaps: no scrape answered (the api was paused).',
    [drawn(c, SERIES.amplificationClient), drawn(c, SERIES.amplificationServer)],
    axisTitle('amplification', unitOf(SERIES.amplificationClient)),
    { layers: [referenceRule(1)] },
  );
}

/**
 * The seconds in which origins ended and none succeeded: the latency figure has no point
 * there, and says why (every origin that ended then failed) rather than leaving a gap.
 */
export function failureOnlySeconds(ts: Timeseries): number[] {
  const t = numbers(ts, 't_s');
  const p50 = numbers(ts, 'response_p50_ms');
  const failed = columnsWithPrefix(ts, 'failed_').map((col) => numbers(ts, col));
  const out: number[] = [];
  t.forEach((ti, i) => {
    if (ti === null || p50[i] !== null) return;
    if (failed.some((f) => (f[i] ?? 0) > 0)) out.push(ti);
  });
  return out;
}

function failureOnlyLayers(seconds: readonly number[]): Overlay {
  if (seconds.length === 0) return {};
  const values = seconds.map((t) => ({ start: t, end: t + 1, label: 'every origin failed' }));
  return {
    layers: [
      {
        data: { values },
        mark: { type: 'rect', color: '#D55E00', opacity: 0.18 },
        encoding: {
          x: { field: 'start', type: 'quantitative' },
          x2: { field: 'end' },
          tooltip: [
            { field: 'start', type: 'quantitative', title: 'time (s)' },
            { field: 'label', type: 'nominal', title: 'no success' },
          ],
        },
      },
    ],
    notes: [{ x: seconds[0]!, label: 'every origin failed', color: '#D55E00' }],
  };
}

function latency(c: Ctx): Figure | null {
  const failing = failureOnlySeconds(c.ts);
  return linesFigure(
    c,
    'latency',
    'Response time percentiles',
    'Response time (completion − intended time) of the origins that succeeded in each second: p50, p99 and max, log scale.' +
      (failing.length > 0
        ? ` The ${failing.length} seconds shaded red ("every origin failed") had origins end and none succeed: no response time to draw.`
        : ' Gaps: no success in that second.'),
    [drawn(c, SERIES.responseP50), drawn(c, SERIES.responseP99), drawn(c, SERIES.responseMax)],
    axisTitle('response time', unitOf(SERIES.responseP50), 'log scale'),
    failureOnlyLayers(failing),
    { log: true },
  );
}

/** `prefix_reason_name` → "reason name". */
function suffixLabel(col: string, prefix: string): string {
  return col.slice(prefix.length).replace(/_/g, ' ');
}

/** Counts per second by kind, stacked; only the kinds that happened. */
function stacked(c: Ctx, name: string, prefix: string, title: string, yTitle: string): Figure | null {
  const cols = columnsWithPrefix(c.ts, prefix).filter((col) => numbers(c.ts, col).some((v) => (v ?? 0) > 0));
  if (cols.length === 0) return null;
  const defs = cols.map((col) => ({ label: suffixLabel(col, prefix), values: numbers(c.ts, col) }));
  const data = longRows(c.ts, defs);
  const labels = defs.map((d) => d.label);
  const enc = seriesEncoding(labels);
  return {
    id: c.id(name),
    title: title + c.runLabel,
    caption: `${title} per second, stacked areas (${labels.join(', ')}); the phases are shaded.`,
    data,
    series: labels,
    spec: document(title + c.runLabel, {
      layer: [
        ...shading(c),
        {
          data: { values: data },
          // A count per one-second bucket, held over its second (step), kinds stacked.
          mark: { type: 'area', interpolate: 'step-after', line: false },
          params: [{ name: 'zoom', select: 'interval', bind: 'scales' }],
          encoding: {
            x: {
              field: 't_s',
              type: 'quantitative',
              title: TIME_AXIS,
              scale: { domain: c.domainS, nice: false },
            },
            y: {
              field: 'value',
              type: 'quantitative',
              title: yTitle,
              stack: 'zero',
              scale: { padding: ZERO_PADDING_PX },
            },
            color: enc['color'],
            order: { field: 'series_order', type: 'quantitative' },
            tooltip: [
              { field: 't_s', type: 'quantitative', title: 'time (s)' },
              { field: 'series', type: 'nominal', title: 'kind' },
              { field: 'value', type: 'quantitative', title: yTitle },
            ],
          },
          transform: [{ calculate: `indexof(${JSON.stringify(labels)}, datum.series)`, as: 'series_order' }],
        },
        ...annotationLayers(shadingNotes(c), c.domainS),
      ],
    }),
  };
}

/** Several quantities with different units over one time axis: one panel each, stacked. */
function panelsFigure(
  c: Ctx,
  name: string,
  title: string,
  caption: string,
  panels: readonly { defs: readonly SeriesDef[]; yTitle: string; step?: boolean; nominal?: boolean }[],
): Figure | null {
  const live = panels.filter((p) => p.defs.length > 0);
  if (live.length === 0) return null;
  const data: Row[] = [];
  const charts = live.map((p, i) => {
    const rows = longRows(c.ts, p.defs);
    data.push(...rows);
    const labels = p.defs.map((d) => d.label);
    return {
      height: 110,
      layer: [
        ...shading(c),
        timeLinesLayer(rows, labels, p.yTitle, { domainS: c.domainS, step: p.step ?? false }),
        // The phases are named once, over the first panel (the panels share the time axis).
        ...(i === 0 ? annotationLayers(shadingNotes(c), c.domainS) : []),
      ],
    };
  });
  return {
    id: c.id(name),
    title: title + c.runLabel,
    caption,
    data,
    series: live.flatMap((p) => p.defs.map((d) => d.label)),
    spec: document(title + c.runLabel, {
      vconcat: charts,
      resolve: { scale: { color: 'independent', strokeDash: 'independent' } },
    }),
  };
}

function present(c: Ctx, col: string, label: string): SeriesDef[] {
  return hasData(c.ts, col) ? [{ label, values: numbers(c.ts, col) }] : [];
}

/**
 * Each api replica's `api<i>_<what>` column, one series per replica (none with a single
 * api), labelled with what it counts: the figure's CSV holds every panel's rows in one
 * table, so `replica 0` alone would not say which panel a row belongs to.
 */
function perReplica(c: Ctx, what: string, noun: string): SeriesDef[] {
  const re = new RegExp(`^api(\\d+)_${what}$`);
  return c.ts.columns
    .map((col) => [col, re.exec(col)?.[1]] as const)
    .filter(([col, i]) => i !== undefined && hasData(c.ts, col))
    .sort((a, b) => Number(a[1]) - Number(b[1]))
    .map(([col, i]) => ({ label: `${noun}, replica ${i}`, values: numbers(c.ts, col) }));
}

function server(c: Ctx): Figure | null {
  // With api replicas: the sum and each replica, and what each received and completed
  // (where a balancer's uneven shares show).
  const replicas = perReplica(c, 'queue_depth', SERIES.queueDepth.name).length > 0;
  const withReplicas = (col: string, what: string, noun: string): SeriesDef[] => [
    ...present(c, col, replicas ? `${noun} (all replicas)` : noun),
    ...perReplica(c, what, noun),
  ];
  return panelsFigure(
    c,
    'server',
    'Queue depth and busy workers',
    replicas
      ? "The api replicas' queue depth and busy workers, summed and each, scraped once a second, and the requests they received and completed, summed and each; a replica's gaps: it did not answer (paused)."
      : "The api's queue depth and busy workers, scraped once a second; gaps: the api did not answer (paused).",
    [
      {
        defs: withReplicas(SERIES.queueDepth.columns[0], 'queue_depth', SERIES.queueDepth.name),
        yTitle: axisTitle(SERIES.queueDepth.name, unitOf(SERIES.queueDepth)),
      },
      {
        defs: withReplicas(SERIES.busyWorkers.columns[0], 'busy_workers', SERIES.busyWorkers.name),
        yTitle: axisTitle(SERIES.busyWorkers.name, unitOf(SERIES.busyWorkers)),
        step: true,
      },
      ...(replicas
        ? [
            { defs: withReplicas('server_received', 'received', 'received'), yTitle: 'received (req/s)' },
            { defs: withReplicas('server_completed', 'completed', 'completed'), yTitle: 'completed (req/s)' },
          ]
        : []),
    ],
  );
}

/**
 * The JVM reference server's garbage collection: the time it spent collecting in each
 * second (the counter's increase per one-second bucket, seconds per second, drawn as ms/s),
 * its collections per second, and the heap in use at each scrape. No such column (every
 * other api): no figure.
 */
function gc(c: Ctx): Figure | null {
  const col = (s: { readonly columns: readonly [string] }): string => s.columns[0];
  const scaled = (s: { readonly columns: readonly [string] }, k: number): (number | null)[] =>
    numbers(c.ts, col(s)).map((v) => (v === null ? null : v * k));
  const one = (s: (typeof JVM_SERIES)[keyof typeof JVM_SERIES], k: number): SeriesDef[] =>
    hasData(c.ts, col(s)) ? [{ label: s.name, values: scaled(s, k) }] : [];
  const { gcTime, gcCollections, heapUsed } = JVM_SERIES;
  return panelsFigure(
    c,
    'gc',
    'Garbage collection',
    `The JVM's time in garbage collection in each second (1000 ms/s: it did nothing else; the report names GC as the sustaining effect when it takes ${GC_SHARE * 100}% or more of the observation's tail, ${GC_SHARE * 1000} ms/s), its collections per second, and the heap in use when scraped; gaps: the server did not answer.`,
    [
      { defs: one(gcTime, 1000), yTitle: axisTitle('GC time per second', gcTime.unit) },
      { defs: one(gcCollections, 1), yTitle: axisTitle('collections', gcCollections.unit), step: true },
      { defs: one(heapUsed, 1 / 2 ** 20), yTitle: axisTitle('heap used', heapUsed.unit) },
    ],
  );
}

function cache(c: Ctx): Figure | null {
  let ratio: (number | null)[] | null = null;
  if (hasData(c.ts, 'cache_hit_ratio'))
    ratio = numbers(c.ts, 'cache_hit_ratio').map((v) => (v === null ? null : v <= 1 ? v * 100 : v));
  else {
    const hits = columnsWithPrefix(c.ts, 'cache_hit').filter((x) => x !== 'cache_hit_ratio');
    const misses = columnsWithPrefix(c.ts, 'cache_miss');
    if (hits.length > 0 && misses.length > 0) {
      const h = numbers(c.ts, hits[0]!);
      const m = numbers(c.ts, misses[0]!);
      ratio = h.map((hv, i) => {
        const mv = m[i] ?? null;
        return hv === null || mv === null || hv + mv === 0 ? null : (100 * hv) / (hv + mv);
      });
    }
  }
  // The api exports its cache counters even without a cache: no lookup at all, no figure.
  if (ratio === null || ratio.every((v) => v === null)) return null;
  return panelsFigure(
    c,
    'cache',
    'Cache hit ratio',
    'Share of cache lookups that hit, per second; gaps: no lookup in that second.',
    [
      {
        defs: [{ label: SERIES.cacheHitRatio.name, values: ratio }],
        yTitle: axisTitle(SERIES.cacheHitRatio.name, unitOf(SERIES.cacheHitRatio)),
      },
    ],
  );
}

function db(c: Ctx): Figure | null {
  const cols = columnsWithPrefix(c.ts, SERIES.dbPoolWaiting.columns[0]);
  return panelsFigure(
    c,
    'db',
    'Database pool waiting',
    'Requests waiting for a database connection, per second.',
    [
      {
        defs: cols.map((col) => ({ label: col.replace(/_/g, ' '), values: numbers(c.ts, col) })),
        yTitle: axisTitle('waiting for a DB connection', unitOf(SERIES.dbPoolWaiting)),
      },
    ],
  );
}

const BREAKER_STATES = ['closed', 'half-open', 'open'];

function breaker(c: Ctx): Figure | null {
  const cols = c.ts.columns.filter((col) => col.startsWith('breaker_') && hasData(c.ts, col));
  if (cols.length === 0) return null;
  const panels = cols.map((col) => {
    const raw = c.ts.col.get(col) ?? [];
    const label = col.replace(/_/g, ' ');
    // A state column may hold names (closed / half-open / open): drawn as levels 0, 1, 2.
    const named = raw.some((v) => typeof v === 'string');
    const values = raw.map((v) =>
      typeof v === 'string' ? (BREAKER_STATES.indexOf(v) >= 0 ? BREAKER_STATES.indexOf(v) : null) : v,
    );
    const unit = named || /state$/.test(col) ? '0 closed, 1 half-open, 2 open' : 'per second';
    return { defs: [{ label, values }], yTitle: `${label} (${unit})`, step: true };
  });
  return panelsFigure(
    c,
    'breaker',
    'Circuit breaker',
    'The client circuit breaker over time: its state and counters.',
    panels,
  );
}

function llm(c: Ctx): Figure | null {
  const defs = (cols: readonly [string, string][]): SeriesDef[] =>
    cols.filter(([col]) => hasData(c.ts, col)).map(([col, label]) => ({ label, values: numbers(c.ts, col) }));
  return panelsFigure(
    c,
    'llm',
    'Open connections and the api retrying the provider',
    "The client's attempts on the wire at each second's end (a streamed answer holds one for seconds) and the chat streams the api is passing through; the api's attempts to the provider per call it wanted (1: no retries).",
    [
      {
        defs: defs([
          ['open_connections', 'client connections open'],
          ['llm_streams_open', 'api streams open'],
        ]),
        yTitle: 'open (connections)',
      },
      { defs: defs([['amplification_llm', 'api → provider']]), yTitle: 'attempts per call' },
    ],
  );
}

function processes(c: Ctx): Figure | null {
  const names = new Set<string>();
  for (const col of c.ts.columns) {
    const m = /^proc_(.+)_(cpu|rss_bytes)$/.exec(col);
    if (m && hasData(c.ts, col)) names.add(m[1]!);
  }
  const cpu: SeriesDef[] = [];
  const rss: SeriesDef[] = [];
  const pct = (v: (number | null)[]) => v.map((x) => (x === null ? null : x * 100));
  const mib = (v: (number | null)[]) => v.map((x) => (x === null ? null : x / 2 ** 20));
  if (names.size > 0) {
    for (const n of names) {
      if (hasData(c.ts, `proc_${n}_cpu`)) cpu.push({ label: n, values: pct(numbers(c.ts, `proc_${n}_cpu`)) });
      if (hasData(c.ts, `proc_${n}_rss_bytes`))
        rss.push({ label: n, values: mib(numbers(c.ts, `proc_${n}_rss_bytes`)) });
    }
  } else {
    if (hasData(c.ts, 'server_cpu_seconds'))
      cpu.push({ label: 'api', values: pct(numbers(c.ts, 'server_cpu_seconds')) });
    if (hasData(c.ts, 'server_rss_bytes'))
      rss.push({ label: 'api', values: mib(numbers(c.ts, 'server_rss_bytes')) });
  }
  return panelsFigure(
    c,
    'processes',
    'CPU and memory per lab process',
    'CPU used by each lab process in each second (100% = one core busy for the whole second) and its resident memory.',
    [
      { defs: cpu, yTitle: axisTitle('CPU', unitOf(SERIES.cpu)) },
      { defs: rss, yTitle: axisTitle('resident memory', unitOf(SERIES.memory)) },
    ],
  );
}
