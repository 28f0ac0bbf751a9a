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
    const cells = t.rows.map((row) => row[k] ?? null);
    columns[name] =
      name === 'phase'
        ? vectorFromArray(cells as (string | null)[], new Utf8())
        : vectorFromArray(cells as (number | null)[], new Float64());
  });
  return new ArrowTable(columns);
}

/** Writes a run's per-second series twice, the same cells: timeseries.csv and timeseries.arrow. */
export function writeTimeseries(dir: string, t: SeriesTable): void {
  writeFileSync(join(dir, TIMESERIES_CSV), seriesCsv(t));
  writeFileSync(join(dir, TIMESERIES_ARROW), tableToIPC(seriesArrow(t), 'file'));
}
