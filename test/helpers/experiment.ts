import { readEvents as readRunEvents } from '../../bench/record/eventLog.js';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { RunSummary } from '../../orchestrator/analysis/summary.js';
import { suiteScale } from './catalogue.js';
import { runCli, tempDir } from './cli.js';
import { assertTwinAgrees } from './twin.js';

/** One row of run-1/timeseries.csv: numbers, strings (phase), null for an empty cell. */
export type Row = Record<string, number | string | null>;

export function readSeries(dir: string): Row[] {
  const [head, ...body] = readFileSync(join(dir, 'run-1/timeseries.csv'), 'utf8').trim().split('\n');
  const cols = head!.split(',');
  return body.map((line) => {
    const cells = line.split(',');
    return Object.fromEntries(
      cols.map((c, i) => {
        const v = cells[i] ?? '';
        return [c, v === '' ? null : Number.isNaN(Number(v)) ? v : Number(v)];
      }),
    );
  });
}

/** The rows of the seconds [fromS, toS). */
export function between(rows: Row[], fromS: number, toS: number): Row[] {
  return rows.filter((r) => (r['t_s'] as number) >= fromS && (r['t_s'] as number) < toS);
}

/** Sum of a column over the seconds [fromS, toS) (empty cells count 0). */
export function sum(rows: Row[], col: string, fromS: number, toS: number): number {
  return between(rows, fromS, toS).reduce((a, r) => a + Number(r[col] ?? 0), 0);
}

export interface ScaledRun {
  readonly out: string;
  readonly s: RunSummary;
  readonly rows: Row[];
  readonly stderr: string;
}

/**
 * Extra arguments for every reproduction run: `METABENCH_REPRO_RUNTIME=sim` runs the
 * suite's lab experiments in simulation instead (for developing an assertion against the
 * fast runtime first; the suite proper runs the local lab).
 */
export function reproRuntimeArgs(): string[] {
  const rt = process.env['METABENCH_REPRO_RUNTIME'];
  return rt ? ['--runtime', rt] : [];
}

/**
 * `metabench run FILE --scale S --repeat 1` into a fresh folder, S the scale the suite
 * runs that experiment at (test/helpers/catalogue.ts), with a state folder of its own (no
 * stored calibration leaks in); asserts it exited 0 (11 when `invalid`: an invalid run
 * is the claim), is usable and reconciles offered with recorded, and returns its summary
 * and series.
 */
export async function runScaled(
  file: string,
  extra: string[] = [],
  env: Record<string, string> = {},
  opts: { readonly invalid?: boolean } = {},
): Promise<ScaledRun> {
  const dir = tempDir('exp');
  const out = join(dir, 'out');
  const scale = suiteScale(basename(file).replace(/\.yaml$/, ''));
  const r = await runCli(
    [
      'run',
      file,
      '--scale',
      String(scale),
      '--repeat',
      '1',
      '--out',
      out,
      '--quiet',
      ...reproRuntimeArgs(),
      ...extra,
    ],
    { METABENCH_STATE_DIR: join(dir, 'state'), ...env },
  );
  // An invalid run exits 11 (unusable); `invalid: true` expects one (its claim).
  assert.equal(r.code, opts.invalid ? 11 : 0, `${file}: exit ${r.code}\n${r.stderr}`);
  const s = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as RunSummary;
  assert.equal(s.offered, s.recorded, `${file}: every origin offered has its outcome`);
  if (!opts.invalid) assert.equal(s.usable, true, `${file}: ${s.warnings.join('; ')}`);
  await assertTwinAgrees(file, s, extra, env);
  return { out, s, rows: readSeries(out), stderr: r.stderr };
}

/** The events of run-1/events.ndjson.gz. */
export function readEvents(dir: string): Record<string, unknown>[] {
  return readRunEvents(join(dir, 'run-1'));
}

/** Failed origins of a run, all kinds together. */
export function failures(s: RunSummary): number {
  return Object.entries(s.outcomes)
    .filter(([k]) => k !== 'ok')
    .reduce((a, [, v]) => a + (v as number), 0);
}
