import type { RunSummary } from '../analysis/summary.js';
import type { SweepTable, SweepVerdict } from '../report/tables.js';
import { loadExperimentFile } from '../spec/load.js';
import { parseSet, type Override } from '../../foundation/overrides.js';
import { planRun } from '../spec/plan.js';
import { BenchError } from '../../foundation/errors.js';
import { simulate } from './simulate.js';
import { describeFailed } from '../analysis/validity.js';
import { cellText, distinctValues, overAxes, sameCoordinate, verdictLetter, type LabJoin } from './over.js';
import { inWorkers, SIMULATION_THREAD_LIMITS } from '../../foundation/workers.js';

export const MAP_FACTORS = [
  { name: 'offered load', unit: 'origins/s' },
  { name: 'trigger duration', unit: 's' },
] as const;
const FIGURES = [
  { name: 'goodput after', unit: 'req/s', of: (s: RunSummary) => s.afterTrigger.goodputPerS },
  {
    name: 'amplification after',
    unit: 'attempts per origin',
    of: (s: RunSummary) => s.afterTrigger.amplification,
  },
  { name: 'recovery time', unit: 's', of: (s: RunSummary) => s.recoveryTimeS },
] as const;

export interface MapOptions {
  /** Offered loads, origins per second. */
  readonly rates: readonly number[];
  /** Trigger durations, ms, as the file would declare them (before --scale). */
  readonly durationsMs: readonly number[];
  readonly scale: number;
  /**
   * The map over the trigger's magnitude instead (model --magnitudes): its values as the
   * file would write them (`3x`, 4, `5%`) with their numbers on the axis; the duration is
   * then the one `durationsMs` holds (the file's).
   */
  readonly magnitudes?: MagnitudeAxis;
  /** The user's --set overrides, applied first. */
  readonly overrides: readonly Override[];
  readonly onPoint?: (done: number, total: number, row: SweepTable['rows'][number], wallMs: number) => void;
  /** Cells simulated at once, on worker threads running `worker` (model --jobs); without it, one at a time. */
  readonly jobs?: number;
  readonly worker?: URL;
  readonly stop?: AbortSignal;
}

/** The second axis of a map over a trigger's magnitude: the field it sets and its values. */
export interface MagnitudeAxis {
  /** The trigger's field (factor, to, probability). */
  readonly field: string;
  /** The axis: e.g. "slowdown factor", in "x". */
  readonly name: string;
  readonly unit: string;
  readonly values: readonly { readonly written: string | number; readonly value: number }[];
}

/**
 * metabench model, part b: the simulated map of the metastable region. The experiment
 * is simulated at every offered load × trigger duration (load.rate and
 * schedule.trigger.duration set, like `--set`), each run's verdict kept. The
 * observation is cut to what the verdict needs (k × D + the recovery window and hold +
 * 10 s, never longer than the file's), since a collapsed run costs more to simulate
 * the longer it lasts.
 */
export async function simulatedMap(file: string, o: MapOptions): Promise<SweepTable> {
  const base = loadExperimentFile(file, o.overrides);
  if (base.schedule.writtenAs !== 'trigger')
    throw new BenchError(
      'E_USAGE',
      'the map varies one trigger’s duration: give the experiment a single `trigger:`',
    );
  if (!base.load.rate)
    throw new BenchError('E_USAGE', 'the map varies a flat offered rate: the experiment needs `load.rate`');
  // Over the magnitude: one duration (the file's), each magnitude; over the duration: no magnitude.
  const sizes = o.magnitudes ? o.magnitudes.values : [undefined];
  const cells = o.durationsMs.flatMap((durationMs) =>
    sizes.flatMap((magnitude) => o.rates.map((rate) => ({ rate, durationMs, magnitude }))),
  );
  const second = o.magnitudes ? { name: o.magnitudes.name, unit: o.magnitudes.unit } : MAP_FACTORS[1];
  const observeMs = (durationMs: number): number =>
    Math.min(
      base.schedule.observe,
      base.recovery.within * durationMs + base.recovery.window + base.recovery.hold + 10_000,
    );
  const jobOf = (c: (typeof cells)[number]): MapCellJob => ({
    kind: 'map-cell',
    file,
    overrides: o.overrides,
    rate: c.rate,
    durationMs: c.durationMs,
    observeMs: observeMs(c.durationMs),
    scale: o.scale,
    ...(c.magnitude && o.magnitudes
      ? { magnitude: { field: o.magnitudes.field, written: c.magnitude.written } }
      : {}),
  });
  const rows: (SweepTable['rows'][number] | undefined)[] = cells.map(() => undefined);
  let done = 0;
  const keep = (i: number, r: MapCellResult): void => {
    const { rate, durationMs, magnitude } = cells[i]!;
    const row = {
      factors: {
        [MAP_FACTORS[0].name]: rate,
        [second.name]: magnitude ? magnitude.value : triggerSeconds(durationMs, o.scale),
      },
      figures: Object.fromEntries(FIGURES.map((f) => [f.name, f.of(r.summary)])),
      verdict: mapVerdict(r.summary),
      ...invalidReason(r.summary),
    };
    rows[i] = row;
    o.onPoint?.(++done, cells.length, row, r.wallMs);
  };
  const cost = (c: { rate: number; durationMs: number }): number => c.rate * observeMs(c.durationMs);
  const jobs = o.jobs ?? 1;
  if (jobs > 1 && o.worker && cells.length > 1)
    await inWorkers(
      o.worker,
      // The dearest first (the simulator's cost grows with the origins it runs: load ×
      // observation), so no long cell is left to run alone at the end.
      [...cells.keys()].sort((a, b) => cost(cells[b]!) - cost(cells[a]!)),
      jobs,
      (i) => jobOf(cells[i]!),
      o.stop ?? new AbortController().signal,
      keep,
      SIMULATION_THREAD_LIMITS,
    );
  else for (const i of cells.keys()) keep(i, await runMapCell(jobOf(cells[i]!)));
  return {
    design: 'grid',
    factors: [{ ...MAP_FACTORS[0] }, { ...second }],
    figures: FIGURES.map((f) => ({ name: f.name, unit: f.unit })),
    // In the grid's order (durations or magnitudes, then loads), whichever thread finished first.
    rows: rows.filter((r) => r !== undefined),
  };
}

// A slow drain (not-recovered) is neither: the map's observation was too short for it.
function mapVerdict(s: RunSummary): SweepVerdict {
  return s.outcome === 'invalid'
    ? 'invalid'
    : s.outcome === 'metastable'
      ? 'metastable'
      : s.outcome === 'recovered' || s.outcome === 'recovered-late'
        ? 'recovered'
        : 'unmeasured';
}

/**
 * Why a cell is invalid, so model.md, model.json and map.csv never show an "I" without it:
 * the validity checks its run failed (counted by check, and worded with value and limit).
 */
export function invalidReason(s: RunSummary): { invalidBecause?: Record<string, number>; outcomes?: string } {
  if (s.outcome !== 'invalid' || !s.validity) return {};
  return {
    invalidBecause: Object.fromEntries(s.validity.failed.map((f) => [f.check, 1])),
    outcomes: `invalid: ${describeFailed(s.validity).join('; ')}`,
  };
}

/** The invalid cells of a map, one line each with what its run failed, for below the map's table. */
export function invalidCells(t: SweepTable): string[] {
  const [x, y] = [t.factors[0] ?? MAP_FACTORS[0], t.factors[1] ?? MAP_FACTORS[1]];
  return t.rows
    .filter((r) => r.verdict === 'invalid')
    .map(
      (r) =>
        `- ${x.name} ${r.factors[x.name]} ${x.unit}, ${y.name} ${r.factors[y.name]} ${y.unit}: ${r.outcomes ?? 'invalid (the reason was not recorded)'}`,
    );
}

/** One cell of the map as a worker thread's job (model --jobs): plain data. */
export interface MapCellJob {
  readonly kind: 'map-cell';
  readonly file: string;
  /** The user's --set overrides (plain data). */
  readonly overrides: readonly Override[];
  readonly rate: number;
  readonly durationMs: number;
  readonly observeMs: number;
  readonly scale: number;
  /** The trigger's magnitude at this cell (model --magnitudes), as the file would write it. */
  readonly magnitude?: { readonly field: string; readonly written: string | number };
}

export interface MapCellResult {
  readonly summary: RunSummary;
  readonly wallMs: number;
}

/** Simulates one cell: the experiment with its load, trigger duration and cut observation set, like `--set`. */
export async function runMapCell(job: MapCellJob): Promise<MapCellResult> {
  const e = loadExperimentFile(job.file, [
    ...job.overrides,
    ...[
      `load.rate=${job.rate}/s`,
      `schedule.trigger.duration=${job.durationMs}ms`,
      `schedule.observe=${job.observeMs}ms`,
      ...(job.magnitude ? [`schedule.trigger.${job.magnitude.field}=${job.magnitude.written}`] : []),
    ].map(set),
  ]);
  const r = await simulate(planRun(e, { scale: job.scale, run: 1, sourceFile: job.file }));
  return { summary: r.summary, wallMs: r.wallMs };
}

function set(text: string): Override {
  const r = parseSet(text);
  if (!r.ok) throw new BenchError('E_USAGE', r.message);
  return r.value;
}

/**
 * A trigger's duration on the map's axis: as written (ms) × the scale, in seconds, to the
 * microsecond (so 10 s at --scale 0.3 is 3, not 3.0000000000000004).
 */
export function triggerSeconds(durationMs: number, scale: number): number {
  return Math.round(durationMs * scale * 1000) / 1e6;
}

/**
 * The map as a markdown table: one row per trigger duration (longest first), one column
 * per load. With a lab sweep over it (`--over`), each cell with a lab point reads
 * "model / lab" (✗ where they disagree), and a lab point off the grid adds its own row or
 * column (see over.ts).
 */
export function mapTable(
  t: SweepTable,
  edges?: { lowerPerS: number; upperPerS: number },
  lab?: LabJoin | null,
  /** Over a magnitude: the model's predicted verdict at a cell, shown beside the simulated one. */
  predicted?: (load: number, magnitude: number) => SweepVerdict | null,
): string[] {
  const mark = (x: number): string =>
    edges ? (x < edges.lowerPerS ? ' (stable)' : x < edges.upperPerS ? '' : ' (unstable)') : '';
  const y = t.factors[1];
  if (y && y.name !== MAP_FACTORS[1].name) return magnitudeTable(t, y, mark, predicted);
  const { loads: xs, triggers } = overAxes(t, lab ?? null);
  const ys = [...triggers].reverse();
  return [
    `| trigger (s) \\ load (origins/s) | ${xs.map((x) => `${x}${mark(x)}`).join(' | ')} |`,
    `|---|${xs.map(() => '---').join('|')}|`,
    ...ys.map((y) => `| ${y} | ${xs.map((x) => cellText(t, lab ?? null, x, y)).join(' | ')} |`),
  ];
}

/**
 * The map over a magnitude as a markdown table: one row per magnitude (largest first), one
 * column per load; a cell reads the simulated verdict, then the model's where it has one
 * ("M (model R)" where they differ).
 */
function magnitudeTable(
  t: SweepTable,
  y: SweepTable['factors'][number],
  mark: (x: number) => string,
  predicted?: (load: number, magnitude: number) => SweepVerdict | null,
): string[] {
  const xs = distinctValues(t.rows.map((r) => Number(r.factors[MAP_FACTORS[0].name])));
  const ys = distinctValues(t.rows.map((r) => Number(r.factors[y.name]))).reverse();
  const cell = (x: number, v: number): string => {
    const row = t.rows.find(
      (r) =>
        sameCoordinate(Number(r.factors[MAP_FACTORS[0].name]), x) &&
        sameCoordinate(Number(r.factors[y.name]), v),
    );
    if (!row) return '';
    const p = predicted?.(x, v) ?? null;
    return p === null || p === row.verdict
      ? verdictLetter(row.verdict)
      : `${verdictLetter(row.verdict)} (model ${verdictLetter(p)})`;
  };
  return [
    `| ${y.name} (${y.unit}) \\ load (origins/s) | ${xs.map((x) => `${x}${mark(x)}`).join(' | ')} |`,
    `|---|${xs.map(() => '---').join('|')}|`,
    ...ys.map((v) => `| ${v} | ${xs.map((x) => cell(x, v)).join(' | ')} |`),
  ];
}
