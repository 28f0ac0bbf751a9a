import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BenchError } from '../../../foundation/errors.js';
import type { Distribution } from '../../analysis/aggregate.js';
import type { SweepTable } from '../../report/tables.js';
import { readRunManifest } from '../manifest.js';
import { methodsTex } from './methods.js';
import { table, type TexTable } from './tables.js';
import { count, num, tex } from './tex.js';

/**
 * A sweep folder (`metabench sweep`) as LaTeX: tables/sweep.tex, one row per point, and
 * the methods of the sweep. Means come from sweep.json, their 95% confidence intervals
 * from each point's summary.json (analysis/aggregate.ts computed them): nothing recomputed.
 */

/** The fields of sweep-plan.json (orchestrator/sweep/runSweep.ts) methods.tex states. */
export interface RecordedSweepPlan {
  readonly name: string;
  readonly design: string;
  readonly runtime: string;
  readonly repeat: number;
  readonly scale: number;
  readonly factors: readonly { path: string; values: readonly unknown[]; reference?: unknown }[];
  readonly points: readonly { index: number; varied?: string; values: Record<string, unknown> }[];
  /** The sweep file and its base experiment file, as paths when it ran. */
  readonly file?: string;
  readonly experimentFile?: string;
  /** The command line's --set overrides, as written. */
  readonly overrides?: readonly string[];
}

/** The sweep's figures of merit: their name in sweep.json and where the point's summary.json keeps their distribution. */
export const SWEEP_TEX_FIGURES = [
  {
    name: 'goodput after',
    head: 'Goodput after (\\si{\\per\\second})',
    path: ['afterTrigger', 'goodputPerS'],
  },
  { name: 'amplification after', head: 'Amplification after', path: ['afterTrigger', 'amplification'] },
  { name: 'recovery time', head: 'Recovery time (\\si{\\second})', path: ['recoveryTimeS'] },
] as const;

function readJson<T>(file: string): T {
  if (!existsSync(file)) throw new BenchError('E_USAGE', `${file}: missing`);
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as T;
  } catch (err) {
    throw new BenchError('E_USAGE', `${file}: not JSON (${(err as Error).message})`);
  }
}

export function readSweepPlan(dir: string): RecordedSweepPlan {
  const file = join(dir, 'sweep-plan.json');
  const p = readJson<Partial<RecordedSweepPlan>>(file);
  for (const key of ['name', 'design', 'runtime', 'repeat', 'scale', 'factors', 'points'] as const)
    if (p[key] === undefined || p[key] === null) throw new BenchError('E_USAGE', `${file}: ${key}: missing`);
  return p as RecordedSweepPlan;
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);
const asValue = (v: unknown): unknown =>
  typeof v === 'number' || typeof v === 'string' ? v : JSON.stringify(v);

/** The plan's point behind each row of sweep.json (rows are finished points, in order). */
export function rowPoints(plan: RecordedSweepPlan, table: SweepTable): number[] {
  const used = new Set<number>();
  return table.rows.map((row, i) => {
    const p = plan.points.find(
      (q) =>
        !used.has(q.index) &&
        q.varied === row.varied &&
        same(Object.fromEntries(Object.entries(q.values).map(([k, v]) => [k, asValue(v)])), row.factors),
    );
    if (!p)
      throw new BenchError(
        'E_USAGE',
        `sweep.json: rows[${i}]: no point of sweep-plan.json has its factor values`,
      );
    used.add(p.index);
    return p.index;
  });
}

function distributionAt(
  summary: Record<string, unknown> | null,
  path: readonly string[],
): Distribution | null {
  let o: unknown = summary;
  for (const k of path)
    o = o !== null && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined;
  return o !== null && typeof o === 'object' && 'ci95' in o ? (o as Distribution) : null;
}

/** A mean and, when the point had the runs for one, its 95% confidence interval. */
function withCi(mean: number | null, d: Distribution | null): string {
  if (mean === null) return '--';
  return d?.ci95 ? `${num(mean)} [${num(d.ci95[0])}, ${num(d.ci95[1])}]` : num(mean);
}

function factorCell(v: string | number): string {
  return typeof v === 'number' ? `\\num{${v}}` : tex(v);
}

export function sweepTables(dir: string, plan: RecordedSweepPlan, sweep: SweepTable): TexTable[] {
  const points = rowPoints(plan, sweep);
  const factors = sweep.factors.map((f) => f.name);
  const rows = sweep.rows.map((row, i) => {
    const file = join(dir, `point-${points[i]}`, 'summary.json');
    // One run gives no summary.json of its own and no interval.
    const summary = existsSync(file) ? readJson<Record<string, unknown>>(file) : null;
    return [
      String(points[i]),
      ...factors.map((f) => factorCell(row.factors[f] ?? '--')),
      tex(row.verdict),
      `${count(row.validRuns)}/${count(row.runs)}`,
      ...SWEEP_TEX_FIGURES.map((f) => withCi(row.figures[f.name] ?? null, distributionAt(summary, f.path))),
    ];
  });
  const t = table(
    'sweep',
    `${tex(plan.name)}: one row per point of the sweep. Figures are means over the point's valid runs, after the trigger ends, with the 95\\% confidence interval in brackets when the point had more than one valid run; the recovery time is measured from the trigger's end (-- when no run recovered).`,
    [
      'Point',
      ...factors.map((f) => `\\texttt{${tex(f)}}`),
      'Verdict',
      'Valid runs',
      ...SWEEP_TEX_FIGURES.map((f) => f.head),
    ],
    rows,
  );
  // A column per factor and an interval per figure: set smaller and closer to fit the text width.
  return [{ ...t, tex: t.tex.replace('\\small\n', '\\footnotesize\n\\setlength{\\tabcolsep}{3pt}\n') }];
}

function valueText(v: unknown): string {
  return typeof v === 'number' ? `\\num{${v}}` : tex(typeof v === 'string' ? v : JSON.stringify(v));
}

/** methods.tex of a sweep: its design, factors, repetitions and scale, then the base experiment's methods as run at the first finished point. */
export function sweepMethodsTex(dir: string, plan: RecordedSweepPlan, sweep: SweepTable): string {
  const first = rowPoints(plan, sweep)[0];
  const design =
    plan.design === 'one-at-a-time'
      ? 'one factor at a time: a reference point first, then each factor moved alone from its reference value'
      : 'a full factorial grid: every combination of the factors’ values';
  const factors = plan.factors.map(
    (f) =>
      `\\texttt{${tex(f.path)}} $\\in$ \\{${f.values.map(valueText).join(', ')}\\}${f.reference !== undefined ? ` (reference ${valueText(f.reference)})` : ''}`,
  );
  const head = [
    `\\paragraph{Sweep design.} The sweep \\texttt{${tex(plan.name)}} varied ${factors.length === 1 ? 'one factor' : `${factors.length} factors`} as ${tex(design)}: ${factors.join('; ')}. It has ${plan.points.length} points, of which ${sweep.rows.length} finished; each point ran ${plan.repeat} repetition${plan.repeat === 1 ? '' : 's'} ${plan.runtime === 'sim' ? 'as a discrete-event simulation in virtual time (runtime \\texttt{sim})' : `in runtime \\texttt{${tex(plan.runtime)}}`}, with every duration scaled by \\num{${+plan.scale.toFixed(6)}}. A point's verdict is the majority of its valid runs' verdicts (a tie counts as metastable).`,
  ];
  if (first === undefined) return `${head.join('\n\n')}\n`;
  const pointDir = join(dir, `point-${first}`);
  const manifest = readRunManifest(pointDir);
  const runs = sweep.rows[0]!.runs ?? plan.repeat;
  return [
    ...head,
    `\\paragraph{Base experiment.} What follows describes point ${first} as it ran; the other points differ from it only in the factors above.`,
    methodsTex(manifest, runs),
  ].join('\n\n');
}
