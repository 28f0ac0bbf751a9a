import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { SpecError } from '../../foundation/errors.js';

/**
 * Reads a load trace (CSV with a header row):
 * - `rates`: one row per second, column `rate` (req/s), optionally `t_s` (ignored, must increase);
 * - `timestamps`: one row per arrival, column `t_ms` or `t_s` (seconds, fractional).
 */
export function readTrace(
  file: string,
  format: 'rates' | 'timestamps',
  field = 'load.replay.file',
): number[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new SpecError([
      {
        file,
        path: field,
        message: `cannot read the trace (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      },
    ]);
  }
  let rows: Record<string, string>[];
  try {
    rows = csvParse()(text, { columns: true, skip_empty_lines: true, trim: true, comment: '#' }) as Record<
      string,
      string
    >[];
  } catch (err) {
    throw new SpecError([{ file, path: field, message: `not a CSV trace: ${(err as Error).message}` }]);
  }
  const column = format === 'rates' ? 'rate' : rows[0] && 't_ms' in rows[0] ? 't_ms' : 't_s';
  const factor = column === 't_s' ? 1000 : 1;
  const out: number[] = [];
  for (let i = 0; i < rows.length; i++) {
    const raw = rows[i]![column];
    const v = Number(raw);
    if (raw === undefined || raw === '' || !Number.isFinite(v) || v < 0)
      throw new SpecError([
        {
          file,
          line: i + 2,
          path: field,
          message: `row ${i + 1}: column "${column}" must be a number >= 0 (got ${JSON.stringify(raw ?? null)})`,
        },
      ]);
    out.push(v * factor);
  }
  if (out.length === 0)
    throw new SpecError([
      { file, path: field, message: `the trace has no rows (expected a header and a "${column}" column)` },
    ]);
  return out;
}

/**
 * csv-parse's synchronous parser, loaded when a trace is read: every experiment loads this
 * module (through the arrival kinds) and few replay a trace (ten modules, a hundredth of a second).
 */
function csvParse(): typeof import('csv-parse/sync').parse {
  return (createRequire(import.meta.url)('csv-parse/sync') as typeof import('csv-parse/sync')).parse;
}
