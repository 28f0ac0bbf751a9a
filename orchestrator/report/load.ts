import { readReplay, type ReplayRecord } from '../results/lateness.js';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import type { AggregateSummary } from '../analysis/aggregate.js';
import type { RunSummary } from '../analysis/summary.js';
import { outcomeOf } from '../analysis/tally.js';
import { BenchError } from '../../foundation/errors.js';
import type { Experiment } from '../spec/schema.js';
import { isStepTable, isSweepTable, type StepTable, type SweepTable } from './tables.js';

/** The part of run-<i>/manifest.json a report reads. */
export interface Manifest {
  readonly startedAt: string;
  readonly gitRevision: string | null;
  readonly machine: {
    readonly cpuModel: string;
    readonly cpus: number;
    readonly memoryBytes: number;
    readonly os: string;
    readonly node: string;
  };
  readonly runtime: string;
  readonly topology: unknown;
  readonly scale: number;
  readonly seed: number;
  readonly experiment: Experiment;
  /** Present when the run was analysed again from its record with other criteria (metabench report --set). */
  readonly reanalysis?: { readonly of: string; readonly overrides: readonly string[] };
}

/**
 * One run's timeseries.csv, column by column. A number cell is a number; an empty cell
 * is null ("not measured", never zero); a cell that is not a number (phase, a breaker
 * state name) stays a string.
 */
export interface Timeseries {
  readonly columns: readonly string[];
  readonly rows: number;
  readonly col: ReadonlyMap<string, readonly (number | string | null)[]>;
}

export interface RunData {
  /** 1-based index, from the folder name run-<i>. */
  readonly index: number;
  readonly manifest: Manifest;
  readonly summary: RunSummary;
  readonly series: Timeseries;
  /** run-<i>/replay/lateness.json: its lateness replayed (validity check 4), when it was. */
  readonly replay?: ReplayRecord | null;
}

/** Everything a report is made from: the files of a results folder, nothing else. */
export interface ResultsData {
  readonly experiment: Experiment;
  readonly runs: readonly RunData[];
  /** DIR/summary.json when the experiment had more than one run. */
  readonly aggregate: AggregateSummary | null;
  /** DIR/sweep.json when the folder holds a sweep (see tables.ts). */
  readonly sweep: SweepTable | null;
  /** DIR/steps.json when the folder holds a step test (see tables.ts). */
  readonly steps: StepTable | null;
  /** DIR/twin/: the same experiment simulated (`metabench run --twin`), when there is one. */
  readonly twin?: ResultsData | null;
}

/**
 * The records of a CSV text with no quote and no carriage return (what a run writes: numbers
 * and plain names), split as csv-parse splits them, empty lines skipped; undefined for any
 * other text, or records of unequal length (csv-parse reads those, and says what is wrong).
 */
function plainRecords(text: string): string[][] | undefined {
  if (text.includes('"') || text.includes('\r')) return undefined;
  const records: string[][] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const r = line.split(',');
    if (records.length > 0 && r.length !== records[0]!.length) return undefined;
    records.push(r);
  }
  return records;
}

export function parseTimeseries(text: string): Timeseries {
  const records =
    plainRecords(text) ??
    (parseCsv(text, { skip_empty_lines: true, relax_column_count: false }) as string[][]);
  const header = records[0] ?? [];
  const body = records.slice(1);
  const col = new Map<string, (number | string | null)[]>();
  header.forEach((name, j) => {
    col.set(
      name,
      body.map((r) => {
        const cell = r[j] ?? '';
        if (cell === '') return null;
        const n = Number(cell);
        return Number.isFinite(n) ? n : cell;
      }),
    );
  });
  return { columns: header, rows: body.length, col };
}

/** The numbers of a column (null where not measured or not numeric); all null when absent. */
export function numbers(ts: Timeseries, name: string): (number | null)[] {
  const c = ts.col.get(name);
  if (!c) return new Array<null>(ts.rows).fill(null);
  return c.map((v) => (typeof v === 'number' ? v : null));
}

/** Whether the column exists and holds at least one measured cell. */
export function hasData(ts: Timeseries, name: string): boolean {
  return (ts.col.get(name) ?? []).some((v) => v !== null);
}

/** Columns whose name starts with `prefix` and hold at least one measured cell, in file order. */
export function columnsWithPrefix(ts: Timeseries, prefix: string): string[] {
  return ts.columns.filter((c) => c.startsWith(prefix) && hasData(ts, c));
}

function readJson<T>(file: string): T {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as T;
  } catch (err) {
    throw new BenchError('E_USAGE', `cannot read ${file}: ${(err as Error).message}`);
  }
}

/**
 * Reads a results folder (see docs/results.md) into plain data. A sweep folder holds
 * no run of its own: its report describes the first complete point (point-<k>/, an
 * experiment folder) and adds the sweep table and figures from DIR/sweep.json.
 */
export function loadResults(dir: string): ResultsData {
  if (!existsSync(dir)) throw new BenchError('E_USAGE', `${dir}: no such results folder`);
  if (!hasRuns(dir) && existsSync(join(dir, 'sweep.json'))) {
    const point = readdirSync(dir)
      .map((name) => /^point-(\d+)$/.exec(name))
      .filter((m): m is RegExpExecArray => m !== null)
      .sort((a, b) => Number(a[1]) - Number(b[1]))
      .map((m) => join(dir, m[0]))
      .find(hasRuns);
    if (point) {
      const sweep = readJson<unknown>(join(dir, 'sweep.json'));
      if (!isSweepTable(sweep))
        throw new BenchError(
          'E_USAGE',
          `${join(dir, 'sweep.json')} is not a sweep table (see orchestrator/report/tables.ts)`,
        );
      return { ...loadResults(point), sweep };
    }
  }
  const runDirs = readdirSync(dir)
    .map((name) => /^run-(\d+)$/.exec(name))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ name: m[0], index: Number(m[1]) }))
    .filter((r) => existsSync(join(dir, r.name, 'summary.json')))
    .sort((a, b) => a.index - b.index);
  if (runDirs.length === 0)
    throw new BenchError(
      'E_USAGE',
      `${dir} holds no finished run (no run-<i>/summary.json)`,
      'give the folder a `metabench run` wrote',
    );
  const runs: RunData[] = runDirs.map((r) => {
    const d = join(dir, r.name);
    const csv = join(d, 'timeseries.csv');
    return {
      index: r.index,
      manifest: upgradeManifest(readJson<Manifest>(join(d, 'manifest.json'))),
      summary: upgradeSummary(readJson<RunSummary>(join(d, 'summary.json'))),
      series: parseTimeseries(existsSync(csv) ? readFileSync(csv, 'utf8') : ''),
      replay: readReplay(d),
    };
  });
  const top = join(dir, 'summary.json');
  const aggregate =
    runs.length > 1 && existsSync(top) ? (readJson<Record<string, unknown>>(top) as AggregateSummary) : null;
  const sweepFile = join(dir, 'sweep.json');
  const stepsFile = join(dir, 'steps.json');
  const sweep = existsSync(sweepFile) ? readJson<unknown>(sweepFile) : null;
  const steps = existsSync(stepsFile) ? readJson<unknown>(stepsFile) : null;
  if (sweep !== null && !isSweepTable(sweep))
    throw new BenchError('E_USAGE', `${sweepFile} is not a sweep table (see orchestrator/report/tables.ts)`);
  if (steps !== null && !isStepTable(steps))
    throw new BenchError('E_USAGE', `${stepsFile} is not a step table (see orchestrator/report/tables.ts)`);
  const twinDir = join(dir, TWIN_DIR);
  const twin = existsSync(twinDir) && hasRuns(twinDir) ? loadResults(twinDir) : null;
  return {
    experiment: runs[0]!.manifest.experiment,
    runs,
    aggregate,
    sweep,
    steps,
    ...(twin ? { twin } : {}),
  };
}

/** Where `metabench run --twin` puts the simulation of a lab run, inside its results folder. */
export const TWIN_DIR = 'twin';

function hasRuns(dir: string): boolean {
  return readdirSync(dir).some(
    (name) => /^run-\d+$/.test(name) && existsSync(join(dir, name, 'summary.json')),
  );
}

/**
 * Results written before schedules had several triggers name one `schedule.trigger`
 * (resolved, without `atMs`) and no `triggers` list: read them as a list of one, so
 * older folders still render.
 */
function upgradeManifest(m: Manifest): Manifest {
  const s = m.experiment.schedule as Experiment['schedule'] & { trigger?: Record<string, unknown> };
  if (s.triggers !== undefined || s.trigger === undefined) return m;
  const { trigger, ...rest } = s;
  const triggers = [{ ...trigger, atMs: 0 }] as Experiment['schedule']['triggers'];
  return {
    ...m,
    experiment: { ...m.experiment, schedule: { ...rest, triggers, writtenAs: 'trigger' } },
  };
}

/**
 * Summaries written before run validity and outcomes (DESIGN.md §2) have neither: their
 * outcome is read from their booleans and their reason is the recovery's; `validity`
 * stays absent, and the report says it was not judged.
 */
function upgradeSummary(s: RunSummary): RunSummary {
  const withTriggers = s.triggers !== undefined ? s : { ...s, triggers: [s.trigger] };
  if ((s as Partial<RunSummary>).outcome !== undefined) return withTriggers;
  return {
    ...withTriggers,
    outcome: outcomeOf(s),
    outcomeReason: s.recoveryReason,
    sustainingEffect: null,
    projectedRecoveryS: null,
    trend: null,
  };
}
