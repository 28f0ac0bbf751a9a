import { stringify } from 'csv-stringify/sync';
import type { Figure } from './figures/common.js';
import type { ResultsData, Timeseries } from './load.js';
import type { StepTable, SweepTable } from './tables.js';

/** A file the report writes: path relative to the results folder, and its content. */
export interface OutFile {
  readonly path: string;
  /** Text, or bytes (a PDF). */
  readonly content: string | Uint8Array;
}

/**
 * Flattens an object to dotted keys: numbers, strings, booleans and nulls are cells;
 * arrays are indexed (hypothesis.0.verdict).
 */
export function flatten(x: unknown, prefix = '', out: Record<string, string | number | boolean | null> = {}) {
  if (x === null || typeof x !== 'object') {
    if (prefix) out[prefix] = x === undefined ? null : (x as string | number | boolean | null);
    return out;
  }
  for (const [k, v] of Object.entries(x)) flatten(v, prefix ? `${prefix}.${k}` : k, out);
  return out;
}

/** Rows of flat objects to CSV, with the union of their keys as the header, in first-seen order. */
export function rowsToCsv(rows: readonly Record<string, unknown>[]): string {
  const cols: string[] = [];
  const seen = new Set<string>();
  for (const r of rows)
    for (const k of Object.keys(r))
      if (!seen.has(k)) {
        seen.add(k);
        cols.push(k);
      }
  return stringify(
    rows.map((r) => cols.map((c) => (r[c] === null || r[c] === undefined ? '' : r[c]))),
    { header: true, columns: cols, cast: { boolean: (b) => String(b) } },
  );
}

function seriesJson(ts: Timeseries): Record<string, readonly (number | string | null)[]> {
  return Object.fromEntries(ts.columns.map((c) => [c, ts.col.get(c) ?? []]));
}

function json(x: unknown): string {
  return JSON.stringify(x, null, 2) + '\n';
}

/**
 * Every series and summary as CSV and JSON (the run folders already hold each run's
 * timeseries.csv and summary.json; these put the runs side by side):
 *   data/runs.csv, data/runs.json          one row / object per run's summary
 *   data/aggregate.csv                     the aggregate summary (several runs), flattened
 *   data/timeseries.csv                    every run's series, long by run
 *   data/timeseries.json                   every run's series, column by column
 *   data/sweep.csv, data/steps.csv         the sweep / step table, when present
 *   figures/<id>.csv, figures/<id>.vl.json the data and Vega-Lite spec of every figure
 */
export function dataFiles(x: ResultsData, figures: readonly Figure[]): OutFile[] {
  const files: OutFile[] = [
    { path: 'data/runs.csv', content: rowsToCsv(x.runs.map((r) => flatten(r.summary))) },
    { path: 'data/runs.json', content: json(x.runs.map((r) => r.summary)) },
    {
      path: 'data/timeseries.csv',
      content: rowsToCsv(
        x.runs.flatMap((r) =>
          Array.from({ length: r.series.rows }, (_, i) => ({
            run: r.index,
            ...Object.fromEntries(r.series.columns.map((c) => [c, r.series.col.get(c)?.[i] ?? null])),
          })),
        ),
      ),
    },
    {
      path: 'data/timeseries.json',
      content: json(x.runs.map((r) => ({ run: r.index, bucketS: 1, series: seriesJson(r.series) }))),
    },
  ];
  if (x.aggregate) files.push({ path: 'data/aggregate.csv', content: rowsToCsv([flatten(x.aggregate)]) });
  if (x.sweep) files.push({ path: 'data/sweep.csv', content: rowsToCsv(sweepRows(x.sweep)) });
  return [...files, ...dataFilesOf({ steps: x.steps, figures })];
}

/** The step table as CSV (when given), and every figure's data and Vega-Lite spec. */
export function dataFilesOf(x: { steps: StepTable | null; figures: readonly Figure[] }): OutFile[] {
  const files: OutFile[] = [];
  if (x.steps) files.push({ path: 'data/steps.csv', content: rowsToCsv(stepRows(x.steps)) });
  for (const f of x.figures) {
    files.push({ path: `figures/${f.id}.csv`, content: rowsToCsv(f.data) });
    files.push({ path: `figures/${f.id}.vl.json`, content: json(f.spec) });
  }
  return files;
}

function sweepRows(t: SweepTable) {
  return t.rows.map((r) => ({
    ...(r.varied !== undefined ? { varied: r.varied } : {}),
    ...r.factors,
    ...r.figures,
    verdict: r.verdict,
    runs: r.runs ?? null,
    metastableRuns: r.metastableRuns ?? null,
  }));
}

function stepRows(t: StepTable) {
  return t.steps.map((s) => ({
    offered_per_s: s.offeredPerS,
    goodput_per_s: s.goodputPerS,
    latency_samples: s.latencyMs.samples,
    latency_p50_ms: s.latencyMs.p50,
    latency_p99_ms: s.latencyMs.p99,
    saturation: t.saturation !== null && t.saturation.offeredPerS === s.offeredPerS,
  }));
}
