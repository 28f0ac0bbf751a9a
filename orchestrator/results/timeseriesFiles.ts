import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type * as Arrow from 'apache-arrow';
import type { Table, Vector } from 'apache-arrow';

// apache-arrow's single-file build: every run writes timeseries.arrow, and the package's
// module tree (Arrow.node.mjs, ~150 files) took 200 ms of CPU to load where this takes 35,
// for the same bytes (timeseriesFiles.test). Its own instance: no codec here, none needed.
const {
  Float64,
  makeData,
  makeVector,
  Table: ArrowTable,
  tableToIPC,
  Utf8,
  vectorFromArray,
} = createRequire(import.meta.url)('apache-arrow/Arrow.esnext.min') as typeof Arrow;

/** One cell of the per-second series: a number, the phase's name, or null (not measured). */
export type SeriesCell = number | string | null;

/** The per-second series as columns' names and rows of cells, what timeseries.csv and timeseries.arrow say. */
export interface SeriesTable {
  readonly columns: readonly string[];
  readonly rows: readonly (readonly SeriesCell[])[];
}

export const TIMESERIES_CSV = 'timeseries.csv';
export const TIMESERIES_ARROW = 'timeseries.arrow';

/** The series as csv text (empty cells: not measured). */
export function seriesCsv(t: SeriesTable): string {
  const lines = [t.columns.join(',')];
  for (const row of t.rows) lines.push(row.map((v) => (v === null ? '' : String(v))).join(','));
  return lines.join('\n') + '\n';
}

/** The series as an Arrow table: `phase` a string, every other column a float64, null where not measured. */
export function seriesArrow(t: SeriesTable): Table {
  const columns: Record<string, Vector> = {};
  t.columns.forEach((name, k) => {
    columns[name] =
      name === 'phase'
        ? vectorFromArray(
            t.rows.map((row) => (row[k] ?? null) as string | null),
            new Utf8(),
          )
        : float64Column(t.rows, k);
  });
  return new ArrowTable(columns);
}

/**
 * Column `k` as a float64 vector, filled in place: what vectorFromArray(cells, new Float64())
 * makes, byte for byte (0 under a null; a validity bitmap only when there is a null; both
 * buffers padded with zeros to a multiple of 64 bytes, as its builder's), without the
 * builder's calls per cell, most of writing the series.
 */
function float64Column(rows: readonly (readonly SeriesCell[])[], k: number): Vector {
  const n = rows.length;
  if (n === 0) return vectorFromArray([] as number[], new Float64());
  const values = new Float64Array(pad64(n * 8) / 8);
  const valid = new Uint8Array(pad64(Math.ceil(n / 8)));
  let nulls = 0;
  for (let i = 0; i < n; i++) {
    const v = rows[i]![k];
    if (v === null || v === undefined) nulls++;
    else {
      values[i] = v as number;
      valid[i >> 3]! |= 1 << (i & 7);
    }
  }
  return makeVector(
    makeData({
      type: new Float64(),
      length: n,
      nullCount: nulls,
      data: values,
      ...(nulls > 0 ? { nullBitmap: valid } : {}),
    }),
  );
}

/** `bytes` rounded up to a multiple of 64 (bytes > 0). */
function pad64(bytes: number): number {
  return Math.ceil(bytes / 64) * 64;
}

/** Writes a run's per-second series twice, the same cells: timeseries.csv and timeseries.arrow. */
export function writeTimeseries(dir: string, t: SeriesTable): void {
  writeFileSync(join(dir, TIMESERIES_CSV), seriesCsv(t));
  writeFileSync(join(dir, TIMESERIES_ARROW), tableToIPC(seriesArrow(t), 'file'));
}
