import type { SweepTable, SweepVerdict } from '../report/tables.js';
import type { MapOverlay } from '../report/figures/sweep.js';

/**
 * `metabench model FILE --over SWEEP_DIR`: a lab sweep drawn over the simulated map.
 * This file is the pure part: each lab point placed on the map's axes (offered load in
 * origins/s, trigger duration in s after the scale), joined to the model's cell at the
 * same coordinates, and the map's cells written as "model / lab". Reading a sweep's
 * results folder is labSweep.ts.
 */

/** One point of a lab sweep, on the map's axes. */
export interface LabPoint {
  /** The sweep's results folder, as given to --over. */
  readonly sweep: string;
  /** The point's index in the sweep (its folder is point-<point>/). */
  readonly point: number;
  /** The point is one experiment's results folder (its runs), not a sweep's point: named by the folder alone. */
  readonly single?: boolean;
  /** The sweep's factor values at this point, as the sweep file wrote them. */
  readonly factors: Readonly<Record<string, string | number>>;
  /** The rate the point's runs offered, origins per second. */
  readonly offeredPerS: number;
  /** The trigger's duration in the point's runs, seconds (after the sweep's scale). */
  readonly triggerS: number;
  /** The lab's verdict (the majority of its runs, as sweep.json gives it). */
  readonly verdict: SweepVerdict;
  readonly runs?: number | undefined;
  readonly metastableRuns?: number | undefined;
  /** The point's valid runs (metastableRuns is out of these); absent in older sweep tables. */
  readonly validRuns?: number | undefined;
}

/** A lab point with the model's verdict at its cell. */
export interface JoinedPoint extends LabPoint {
  /** The model's verdict at the cell with the same load and trigger duration; null when the map has none. */
  readonly model: SweepVerdict | null;
  /** Whether both say the same; null when they cannot be compared (no model cell, or either unmeasured). */
  readonly agree: boolean | null;
}

export interface LabJoin {
  readonly points: readonly JoinedPoint[];
  readonly agree: number;
  readonly disagree: number;
  /** Lab points with no model cell at their coordinates. */
  readonly noCell: number;
  /** Lab points on a model cell where either verdict is unmeasured. */
  readonly unmeasured: number;
}

const [LOAD, TRIGGER] = ['offered load', 'trigger duration'] as const;

/** Two coordinates are the same cell when they agree to a millionth (floating point of ms × scale). */
export function sameCoordinate(a: number, b: number): boolean {
  return Math.abs(a - b) <= 1e-6 * Math.max(1, Math.abs(a), Math.abs(b));
}

/** Distinct values (to a millionth; of near-equal ones the first given), ascending. */
export function distinctValues(xs: readonly number[]): number[] {
  const out: number[] = [];
  for (const x of xs) if (!out.some((y) => sameCoordinate(x, y))) out.push(x);
  return out.sort((a, b) => a - b);
}

function cellAt(map: SweepTable, load: number, triggerS: number): SweepTable['rows'][number] | undefined {
  return map.rows.find(
    (r) =>
      sameCoordinate(Number(r.factors[LOAD]), load) && sameCoordinate(Number(r.factors[TRIGGER]), triggerS),
  );
}

/** Every lab point joined to the model's cell at its coordinates, and the agreements counted. */
export function joinLab(map: SweepTable, lab: readonly LabPoint[]): LabJoin {
  const points = lab.map((p): JoinedPoint => {
    const cell = cellAt(map, p.offeredPerS, p.triggerS);
    const model = cell?.verdict ?? null;
    const agree =
      model === null ||
      model === 'unmeasured' ||
      model === 'invalid' ||
      p.verdict === 'unmeasured' ||
      p.verdict === 'invalid'
        ? null
        : model === p.verdict;
    return { ...p, model, agree };
  });
  return {
    points,
    agree: points.filter((p) => p.agree === true).length,
    disagree: points.filter((p) => p.agree === false).length,
    noCell: points.filter((p) => p.model === null).length,
    unmeasured: points.filter((p) => p.model !== null && p.agree === null).length,
  };
}

/** One sentence: how many lab points agree with the model. */
export function describeJoin(j: LabJoin): string {
  const n = j.points.length;
  const parts = [
    `${j.agree} agree${j.agree === 1 ? 's' : ''}`,
    `${j.disagree} disagree${j.disagree === 1 ? 's' : ''}${j.disagree ? ' (✗)' : ''}`,
    ...(j.unmeasured ? [`${j.unmeasured} unmeasured on one side`] : []),
    ...(j.noCell
      ? [`${j.noCell} with no model cell at ${j.noCell === 1 ? 'its' : 'their'} load and duration`]
      : []),
  ];
  return `lab vs model: ${n} lab point${n === 1 ? '' : 's'}; ${parts.join(', ')}`;
}

/** A lab point as the report names it: the sweep folder and its point, or a run's folder. */
export function pointName(p: Pick<LabPoint, 'sweep' | 'point' | 'single'>): string {
  return p.single ? p.sweep : `${p.sweep} point-${p.point}`;
}

/** M metastable (bold, as in the map), R recovered, ? unmeasured, I invalid (no valid run: no verdict). */
export function verdictLetter(v: SweepVerdict): string {
  return v === 'metastable' ? '**M**' : v === 'recovered' ? 'R' : v === 'invalid' ? 'I' : '?';
}

function labLetter(p: LabPoint): string {
  const runs =
    p.runs !== undefined && p.runs > 1 ? ` ${p.metastableRuns ?? '?'}/${p.validRuns ?? p.runs}` : '';
  return `${verdictLetter(p.verdict)}${runs}`;
}

/**
 * A cell of the map with the lab over it: the model's verdict alone where no lab point
 * is; "model / lab" where one is (several lab points: their verdicts by a comma, a
 * repeated point with its metastable runs / runs), ✗ when any of them disagrees; "– / lab"
 * where the lab has a point and the map no cell.
 */
export function overCell(model: SweepVerdict | null, lab: readonly JoinedPoint[]): string {
  if (lab.length === 0) return model === null ? '' : verdictLetter(model);
  const labs = lab.map(labLetter).join(', ');
  const cross = lab.some((p) => p.agree === false) ? ' ✗' : '';
  return `${model === null ? '–' : verdictLetter(model)} / ${labs}${cross}`;
}

/** The map's axes with the lab points' coordinates added (a point off the grid gets its own row or column). */
export function overAxes(map: SweepTable, j: LabJoin | null): { loads: number[]; triggers: number[] } {
  const pts = j?.points ?? [];
  return {
    loads: distinctValues([
      ...map.rows.map((r) => Number(r.factors[LOAD])),
      ...pts.map((p) => p.offeredPerS),
    ]),
    triggers: distinctValues([
      ...map.rows.map((r) => Number(r.factors[TRIGGER])),
      ...pts.map((p) => p.triggerS),
    ]),
  };
}

/** The cell text at one load and trigger duration (the model's verdict, and the lab's when it has a point there). */
export function cellText(map: SweepTable, j: LabJoin | null, load: number, triggerS: number): string {
  const here = (j?.points ?? []).filter(
    (p) => sameCoordinate(p.offeredPerS, load) && sameCoordinate(p.triggerS, triggerS),
  );
  return overCell(cellAt(map, load, triggerS)?.verdict ?? null, here);
}

/**
 * The lab points as the map figure's overlay: each at the map's own value of its load and
 * trigger duration (the same to a millionth), so it lands in its cell; a point off the
 * grid at its own.
 */
export function labOverlay(map: SweepTable, j: LabJoin): MapOverlay {
  const { loads, triggers } = overAxes(map, null);
  const snap = (xs: readonly number[], v: number): number => xs.find((x) => sameCoordinate(x, v)) ?? v;
  return {
    name: 'lab',
    cells: 'model',
    points: j.points.map((p) => ({
      x: snap(loads, p.offeredPerS),
      y: snap(triggers, p.triggerS),
      verdict: p.verdict,
      agree: p.agree,
      source: `${pointName(p)}${p.runs !== undefined && p.runs > 1 ? ` (metastable ${p.metastableRuns ?? '?'}/${p.runs})` : ''}`,
    })),
  };
}
