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
  return cellsToCsv(cols, rows.length, (i, j) => rows[i]![cols[j]!]);
}

/**
 * CSV of `rows` rows of `cols` columns, cell (i, j) from `cell`: null and undefined are
 * empty. Numbers, strings and booleans are written here as csv-stringify writes them (a
 * field quoted when it holds a comma, a quote or a line break, its quotes doubled), a
 * string at a time rather than a record object per row; any other cell (an object, a
 * date) sends the whole table through csv-stringify.
 */
export function cellsToCsv(
  cols: readonly string[],
  rows: number,
  cell: (row: number, col: number) => unknown,
): string {
  const lines: string[] = [cols.map(field).join(',')];
  const line: string[] = new Array<string>(cols.length);
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < cols.length; j++) {
      const v = cell(i, j);
      if (v === null || v === undefined) line[j] = '';
      else if (typeof v === 'number') line[j] = `${v}`;
      else if (typeof v === 'string') line[j] = field(v);
      else if (typeof v === 'boolean') line[j] = v ? 'true' : 'false';
      else return viaCsvStringify(cols, rows, cell);
    }
    lines.push(line.join(','));
  }
  return lines.join('\n') + '\n';
}

/** A string field as csv-stringify writes it (its default options). */
function field(s: string): string {
  if (!/[,"\n\r]/.test(s)) return s;
  return `"${s.replaceAll('"', '""')}"`;
}

function viaCsvStringify(
  cols: readonly string[],
  rows: number,
  cell: (row: number, col: number) => unknown,
): string {
  return stringify(
    Array.from({ length: rows }, (_, i) =>
      cols.map((_, j) => {
        const v = cell(i, j);
        return v === null || v === undefined ? '' : v;
      }),
    ),
    { header: true, columns: [...cols], cast: { boolean: (b) => String(b) } },
  );
}

/**
 * Every run's series, long by run: a `run` column, then the union of the runs' columns in
 * first-seen order; a column a run lacks is empty in its rows.
 */
function timeseriesCsv(runs: ResultsData['runs']): string {
  // A series of its own named `run` would take the run's place in its rows: row objects keep that.
  if (runs.some((r) => r.series.columns.includes('run')))
    return rowsToCsv(
      runs.flatMap((r) =>
        Array.from({ length: r.series.rows }, (_, i) => ({
          run: r.index,
          ...Object.fromEntries(r.series.columns.map((c) => [c, r.series.col.get(c)?.[i] ?? null])),
        })),
      ),
    );
  const cols = ['run'];
  for (const r of runs) for (const c of r.series.columns) if (!cols.includes(c)) cols.push(c);
  const at: { run: number; i: number; col: readonly (readonly unknown[] | undefined)[] }[] = [];
  for (const r of runs) {
    const col = cols.map((c) => r.series.col.get(c));
    for (let i = 0; i < r.series.rows; i++) at.push({ run: r.index, i, col });
  }
  return cellsToCsv(cols, at.length, (row, j) => {
    const a = at[row]!;
    return j === 0 ? a.run : (a.col[j]?.[a.i] ?? null);
  });
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
      content: timeseriesCsv(x.runs),
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
