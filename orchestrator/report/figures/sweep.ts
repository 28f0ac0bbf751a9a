import type { SweepTable, SweepVerdict } from '../tables.js';
import { PALETTE } from '../theme.js';
import { document, EDGE_PX, legendColumns, rounded, type Figure, type Row } from './common.js';
import type { VlSpec } from '../svg.js';
import { distribution } from '../../analysis/aggregate.js';
import { numericLevels, sortedLevels } from '../../analysis/levels.js';

/**
 * Verdict colours: metastable vermillion, recovered green, unmeasured grey, invalid (no
 * valid run at the point) black (and shapes, for greyscale print).
 */
const VERDICTS: readonly SweepVerdict[] = ['metastable', 'recovered', 'unmeasured', 'invalid'];
const VERDICT_COLORS = [PALETTE.vermillion, PALETTE.green, '#999999', PALETTE.black];
const VERDICT_SHAPES = ['triangle-up', 'circle', 'cross', 'square'];

/** Pixels a scale reaches past its first and last points: a point at the axis edge is drawn whole. */

function axisTitle(name: string, unit: string): string {
  return `${name} (${unit})`;
}

/**
 * The figures of a sweep (see tables.ts for the table):
 *  - one-at-a-time: for each factor, each figure of merit against that factor (rows
 *    where it was the one varied), points shaped and coloured by verdict, the
 *    reference value marked;
 *  - grid of two factors: a map of the metastable region (one cell per combination,
 *    coloured by verdict, labelled with metastable runs / runs when repeated), and each
 *    figure of merit against the first factor, one line per value of the second.
 */
export function sweepFigures(t: SweepTable, overlay?: MapOverlay, predicted?: PredictedRegion): Figure[] {
  if (t.design === 'grid' && t.factors.length === 2)
    // Main effects where the table has runs to pool (a sweep's; a simulated map has one run a cell).
    return [
      metastableMap(t, overlay, predicted),
      ...gridLines(t),
      ...(t.rows.some((r) => r.perRun) ? mainEffects(t) : []),
    ];
  return t.factors.map((f) => factorFigure(t, f));
}

/**
 * Points drawn over a grid's map of the metastable region (`metabench model --over`: a
 * lab sweep over the simulated map), each at its own coordinates on the map's factors:
 * a dot coloured by its own verdict, shaped by whether it agrees with the cell under it.
 */
export interface MapOverlay {
  /** What the points are, for the legend and caption (e.g. "lab"). */
  readonly name: string;
  /** What the cells are (e.g. "model"). */
  readonly cells: string;
  readonly points: readonly {
    readonly x: number | string;
    readonly y: number | string;
    readonly verdict: SweepVerdict;
    /** agrees / disagrees with the cell's verdict; null when not compared (no cell, or unmeasured). */
    readonly agree: boolean | null;
    /** Where the point comes from (its sweep folder and point), for the tooltip. */
    readonly source: string;
  }[];
}

/**
 * A model's prediction over a grid's map (`metabench model --magnitudes`): whether it
 * predicts each cell metastable; its boundary is drawn as a dashed step line along the cell
 * edges that part a predicted-metastable cell from a predicted-recovered one.
 */
export interface PredictedRegion {
  /** Whose prediction (e.g. "fluid model"). */
  readonly name: string;
  readonly cells: readonly {
    readonly x: number | string;
    readonly y: number | string;
    readonly metastable: boolean;
  }[];
  /** The boundary in words, for the caption (e.g. "280/s: 1.51"). */
  readonly boundary: string;
}

const AGREEMENT = ['agrees', 'disagrees', 'not compared'];
const AGREEMENT_SHAPES = ['circle', 'cross', 'square'];

function rowsFor(t: SweepTable, factor: string): SweepTable['rows'] {
  if (t.factors.length === 1) return t.rows;
  return t.rows.filter((r) => r.varied === factor || r.varied === undefined);
}

/** A figure of merit at one point: the mean over its valid runs and the 95% CI when it has several. */
export function pointStat(
  row: SweepTable['rows'][number],
  figure: string,
): { value: number | null; low: number | null; high: number | null; n: number | null } {
  const perRun = row.perRun?.[figure];
  if (!perRun) return { value: row.figures[figure] ?? null, low: null, high: null, n: null };
  const d = distribution(perRun);
  return {
    value: d.mean,
    low: d.ci95 ? rounded(d.ci95[0]) : null,
    high: d.ci95 ? rounded(d.ci95[1]) : null,
    n: d.count,
  };
}

/**
 * A factor's axis: numeric and sorted when its values read as numbers (rates and
 * durations with their units, numbers), else its values in the order written.
 */
export function factorAxis(
  f: SweepTable['factors'][number],
  values: readonly (string | number | undefined)[],
): {
  type: 'quantitative' | 'ordinal';
  title: string;
  at: (v: string | number) => string | number;
  sort: (string | number)[] | null;
  ticks?: number[];
  integer?: boolean;
} {
  const num = numericLevels(values);
  if (num) {
    const ticks = sortedLevels(values).map((v) => num.value(v));
    return {
      type: 'quantitative',
      title: axisTitle(f.name, num.unit ?? (f.unit === 'as written' ? 'value' : f.unit)),
      at: (v) => num.value(v),
      sort: null,
      // Few levels: a tick at each (no 1.5 attempts between 1 and 2).
      ...(ticks.length <= 8 ? { ticks } : {}),
      // Whole levels (attempts, workers): whole tick labels, "2" and not "2.0".
      integer: ticks.every((v) => Number.isInteger(v)),
    };
  }
  return { type: 'ordinal', title: axisTitle(f.name, f.unit), at: (v) => v, sort: sortedLevels(values) };
}

/** Figures of merit with at least one measured value: no empty panel. */
function measuredFigures(t: SweepTable, rows: SweepTable['rows']): SweepTable['figures'] {
  return t.figures.filter((m) => rows.some((r) => pointStat(r, m.name).value !== null));
}

/** Error bars from `low` to `high` (the 95% CI), where a point has one. */
function errorBars(x: VlSpec, yTitle: string | string[], color?: VlSpec): VlSpec {
  return {
    transform: [{ filter: 'isValid(datum.low) && isValid(datum.high)' }],
    mark: { type: 'errorbar', ticks: true, ...(color ? {} : { color: '#333333' }) },
    encoding: {
      x,
      y: { field: 'low', type: 'quantitative', title: yTitle },
      y2: { field: 'high' },
      ...(color ? { color } : {}),
    },
  };
}

/**
 * Points with no valid run (verdict invalid) have no value to plot: they are drawn, marked,
 * as a dashed vertical rule at their level labelled "invalid", so they do not vanish.
 */
function invalidMarks(x: VlSpec, rows: readonly Row[]): VlSpec[] {
  if (!rows.some((r) => r['verdict'] === 'invalid' && r['value'] === null)) return [];
  const only = { filter: "datum.verdict === 'invalid' && !isValid(datum.value)" };
  return [
    {
      transform: [only],
      mark: { type: 'rule', strokeDash: [2, 3], color: PALETTE.black, strokeWidth: 1.2 },
      encoding: {
        x,
        tooltip: [
          { field: 'factor', title: 'level' },
          { field: 'verdict', type: 'nominal', title: 'invalid: no valid run, no value' },
        ],
      },
    },
    {
      transform: [only],
      mark: {
        type: 'text',
        text: 'invalid',
        angle: 270,
        align: 'right',
        baseline: 'bottom',
        dx: -4,
        fontSize: 9,
      },
      encoding: { x, y: { value: 4 } },
    },
  ];
}

/** Whether any row has a confidence interval to draw (an error-bar layer over none warns). */
function hasCi(rows: readonly Row[]): boolean {
  return rows.some((r) => r['low'] !== null && r['high'] !== null);
}

/** Panels side by side, two to a row when there are more than two. */
function panelsLayout(panels: VlSpec[]): VlSpec {
  if (panels.length <= 2) return { vconcat: panels };
  const rows: VlSpec[] = [];
  for (let i = 0; i < panels.length; i += 2) rows.push({ hconcat: panels.slice(i, i + 2) });
  return { vconcat: rows };
}

/**
 * The x channel's sort or scale and ticks for a factor's axis: reaching a little past the
 * first and last levels, so their points are drawn whole.
 */
function xScale(axis: ReturnType<typeof factorAxis>): VlSpec {
  if (axis.sort) return { sort: axis.sort };
  return {
    scale: { zero: false, nice: false, padding: EDGE_PX },
    axis: {
      ...(axis.ticks ? { values: axis.ticks } : {}),
      ...(axis.integer ? { format: 'd', tickMinStep: 1 } : { format: '~g' }),
    },
  };
}

/**
 * A y scale for a panel whose values are all one number (a recovery time of 0 at every
 * point): from 0 to above it, so the axis reads "0", not one tick of "0.000000".
 */
function flatDomain(rows: readonly Row[]): VlSpec {
  const vs = rows
    .flatMap((r) => [r['value'], r['low'], r['high']])
    .filter((v): v is number => typeof v === 'number');
  // Padded: a point at the top or bottom of the axis is drawn whole.
  if (vs.length === 0 || Math.min(...vs) !== Math.max(...vs)) return { scale: { padding: EDGE_PX } };
  const v = vs[0]!;
  return {
    scale: {
      domain: v === 0 ? [0, 1] : [Math.min(0, v * 1.2), Math.max(0, v * 1.2)],
      padding: EDGE_PX,
    },
  };
}

function factorFigure(t: SweepTable, f: SweepTable['factors'][number]): Figure {
  const rows = rowsFor(t, f.name);
  const axis = factorAxis(
    f,
    rows.map((r) => r.factors[f.name]),
  );
  const figures = measuredFigures(t, rows);
  const data: Row[] = [];
  for (const r of rows)
    for (const m of figures) {
      const v = r.factors[f.name];
      const st = pointStat(r, m.name);
      data.push({
        factor: v ?? null,
        x: v === undefined ? null : axis.at(v),
        figure: m.name,
        value: st.value,
        low: st.low,
        high: st.high,
        runs: st.n,
        verdict: r.verdict,
      });
    }
  data.sort((a, b) => (typeof a['x'] === 'number' && typeof b['x'] === 'number' ? a['x'] - b['x'] : 0));
  const x = {
    field: 'x',
    type: axis.type,
    title: axis.title,
    ...xScale(axis),
  };
  const title = `${t.name ? `${t.name}: f` : 'F'}igures of merit against ${f.name}`;
  const panels = figures.map((m) => {
    // On two lines: a rotated one-line title longer than the panel is tall spreads the rows apart.
    const yTitle = [m.name, `(${m.unit})`];
    const yFlat = flatDomain(data.filter((r) => r['figure'] === m.name));
    return {
      height: 120,
      transform: [{ filter: { field: 'figure', equal: m.name } }],
      layer: [
        {
          mark: { type: 'line', color: '#555555', strokeWidth: 1.2 },
          encoding: { x, y: { field: 'value', type: 'quantitative', title: yTitle, ...yFlat } },
        },
        ...(hasCi(data.filter((r) => r['figure'] === m.name)) ? [errorBars(x, yTitle)] : []),
        ...invalidMarks(
          x,
          data.filter((r) => r['figure'] === m.name),
        ),
        {
          mark: { type: 'point', filled: true, size: 70, opacity: 1 },
          params: [{ name: 'zoom', select: 'interval', bind: 'scales' }],
          encoding: {
            x,
            y: { field: 'value', type: 'quantitative', title: yTitle, ...yFlat },
            color: {
              field: 'verdict',
              type: 'nominal',
              title: 'verdict',
              legend: { columns: legendColumns(VERDICTS) },
              scale: { domain: VERDICTS, range: VERDICT_COLORS },
            },
            shape: {
              field: 'verdict',
              type: 'nominal',
              title: 'verdict',
              legend: { columns: legendColumns(VERDICTS) },
              scale: { domain: VERDICTS, range: VERDICT_SHAPES },
            },
            tooltip: [
              { field: 'factor', title: f.name },
              { field: 'value', type: 'quantitative', title: m.name },
              { field: 'low', type: 'quantitative', title: '95% CI low' },
              { field: 'high', type: 'quantitative', title: '95% CI high' },
              { field: 'runs', type: 'quantitative', title: 'valid runs' },
              { field: 'verdict', type: 'nominal' },
            ],
          },
        },
        ...(f.reference !== undefined && axis.type === 'quantitative'
          ? [
              {
                data: { values: [{ x: axis.at(f.reference), label: 'reference' }] },
                mark: { type: 'rule', strokeDash: [4, 3], color: '#000000' },
                encoding: { x: { field: 'x', type: 'quantitative' } },
              },
            ]
          : []),
      ],
    };
  });
  const omitted = t.figures.filter((m) => !figures.includes(m)).map((m) => m.name);
  return {
    id: `sweep-${slug(f.name)}`,
    title,
    caption:
      `${figures.map((m) => m.name).join(', ')} against ${f.name} (${rows.length} points${f.reference !== undefined ? `, reference ${f.reference}` : ''}); each point the mean over its valid runs, with its 95% confidence interval (t distribution) where it has several, coloured and shaped by its verdict.` +
      (invalidAt(rows, f.name).length
        ? ` Invalid (no valid run, so no value): ${invalidAt(rows, f.name).join(', ')}, drawn as a dashed line labelled "invalid".`
        : '') +
      (omitted.length ? ` Not drawn, measured at no point: ${omitted.join(', ')}.` : ''),
    data,
    series: figures.map((m) => m.name),
    spec: document(title, { data: { values: data }, ...panelsLayout(panels) }),
  };
}

/** The levels of a factor at which the point had no valid run. */
function invalidAt(rows: SweepTable['rows'], factor: string): (string | number)[] {
  return rows.filter((r) => r.verdict === 'invalid').flatMap((r) => r.factors[factor] ?? []);
}

function metastableMap(t: SweepTable, overlay?: MapOverlay, predicted?: PredictedRegion): Figure {
  const [fx, fy] = [t.factors[0]!, t.factors[1]!];
  const cells: Row[] = t.rows.map((r) => ({
    ...(overlay || predicted ? { layer: 'cell' } : {}),
    x: r.factors[fx.name] ?? null,
    y: r.factors[fy.name] ?? null,
    verdict: r.verdict,
    label:
      r.runs !== undefined && r.metastableRuns !== undefined
        ? `${r.metastableRuns}/${r.validRuns ?? r.runs}${r.invalidRuns ? ` (${r.invalidRuns} invalid)` : ''}`
        : r.verdict === 'metastable'
          ? 'M'
          : r.verdict === 'recovered'
            ? 'R'
            : r.verdict === 'invalid'
              ? 'I'
              : '?',
  }));
  // Several points in one cell sit side by side, 12 px apart.
  const seen = new Map<string, number>();
  const count = new Map<string, number>();
  const key = (p: { x: unknown; y: unknown }): string => JSON.stringify([p.x, p.y]);
  for (const p of overlay?.points ?? []) count.set(key(p), (count.get(key(p)) ?? 0) + 1);
  const marks: Row[] = (overlay?.points ?? []).map((p) => {
    const i = seen.get(key(p)) ?? 0;
    seen.set(key(p), i + 1);
    return {
      layer: overlay!.name,
      x: p.x,
      y: p.y,
      verdict: p.verdict,
      agreement: p.agree === null ? 'not compared' : p.agree ? 'agrees' : 'disagrees',
      source: p.source,
      dx: (i - ((count.get(key(p)) ?? 1) - 1) / 2) * 12,
    };
  });
  const data = [...cells, ...marks];
  // Numerically where the levels read as numbers ("20% capacity" < "100% capacity").
  const sortOf = (vals: (string | number)[]) => sortedLevels(vals);
  const defined = (v: Row[string] | undefined): v is string | number => v !== undefined && v !== null;
  const xs = sortOf(data.map((r) => r['x']).filter(defined));
  const ys = sortOf(data.map((r) => r['y']).filter(defined)).reverse();
  // The predicted boundary's segments, on the edges between cells it predicts differently.
  const boundary = predicted ? boundaryEdges(predicted, xs, ys) : [];
  data.push(...boundary);
  const title = overlay
    ? `Metastable region: the ${overlay.name} over the ${overlay.cells}`
    : 'Metastable region';
  const enc = {
    x: { field: 'x', type: 'ordinal', title: axisTitle(fx.name, fx.unit), sort: xs, axis: { labelAngle: 0 } },
    y: { field: 'y', type: 'ordinal', title: axisTitle(fy.name, fy.unit), sort: ys },
  };
  const color = {
    field: 'verdict',
    type: 'nominal',
    title: 'verdict',
    legend: { columns: legendColumns(VERDICTS) },
    scale: { domain: VERDICTS, range: VERDICT_COLORS },
  };
  const only = (layer: string) =>
    overlay || predicted ? { transform: [{ filter: { field: 'layer', equal: layer } }] } : {};
  const layers: Record<string, unknown>[] = [
    {
      ...only('cell'),
      mark: { type: 'rect', stroke: 'white', strokeWidth: 1 },
      encoding: {
        ...enc,
        color,
        tooltip: [
          { field: 'x', title: fx.name },
          { field: 'y', title: fy.name },
          { field: 'verdict', type: 'nominal' },
          { field: 'label', type: 'nominal', title: 'metastable runs' },
        ],
      },
    },
    {
      ...only('cell'),
      mark: { type: 'text', fontSize: 10, color: 'white', ...(overlay ? { dy: -9 } : {}) },
      encoding: { ...enc, text: { field: 'label' } },
    },
  ];
  if (boundary.length) {
    // A rule along one edge of its cell: the bottom edge (h) or the right edge (v).
    const line = { type: 'rule', stroke: PALETTE.black, strokeWidth: 2.5, strokeDash: [6, 3] };
    const edge = (side: 'h' | 'v') => ({
      transform: [{ filter: { field: 'layer', equal: `boundary-${side}` } }],
      mark: line,
      encoding:
        side === 'h'
          ? {
              x: { ...enc.x, bandPosition: 0 },
              x2: { field: 'x', bandPosition: 1 },
              y: { ...enc.y, bandPosition: 1 },
            }
          : {
              x: { ...enc.x, bandPosition: 1 },
              y: { ...enc.y, bandPosition: 0 },
              y2: { field: 'y', bandPosition: 1 },
            },
    });
    layers.push(
      ...(boundary.some((b) => b['layer'] === 'boundary-h') ? [edge('h')] : []),
      ...(boundary.some((b) => b['layer'] === 'boundary-v') ? [edge('v')] : []),
    );
  }
  if (overlay)
    layers.push({
      ...only(overlay.name),
      mark: {
        type: 'point',
        filled: true,
        size: 90,
        stroke: 'black',
        strokeWidth: 1,
        opacity: 1,
        yOffset: 6,
        xOffset: { expr: 'datum.dx' },
      },
      encoding: {
        ...enc,
        color,
        shape: {
          field: 'agreement',
          type: 'nominal',
          title: `${overlay.name} vs ${overlay.cells}`,
          scale: { domain: AGREEMENT, range: AGREEMENT_SHAPES },
        },
        tooltip: [
          { field: 'source', title: overlay.name },
          { field: 'x', title: fx.name },
          { field: 'y', title: fy.name },
          { field: 'verdict', type: 'nominal', title: `${overlay.name} verdict` },
          { field: 'agreement', type: 'nominal' },
        ],
      },
    });
  return {
    id: 'sweep-map',
    title,
    caption: overlay
      ? `Cells: the ${overlay.cells}'s verdict for every combination of ${fx.name} and ${fy.name}, metastable (vermillion), recovered (green), unmeasured (grey). ` +
        `Dots: the ${overlay.name}'s points, coloured by their own verdict, a circle where it agrees with the ${overlay.cells}'s cell, a cross where it disagrees, a square where there is no cell to compare with (or either is unmeasured).`
      : `The verdict for every combination of ${fx.name} and ${fy.name}: metastable (vermillion), recovered (green), unmeasured (grey), invalid (black: no valid run); labels give metastable runs / valid runs where repeated, and the invalid runs (M metastable, R recovered, I invalid otherwise).` +
        (predicted
          ? ` Dashed line: the ${predicted.name}'s predicted boundary (${predicted.boundary}), between the cells it predicts metastable and those it predicts recovered.`
          : ''),
    data,
    series: [
      ...VERDICTS.filter((v) => data.some((r) => r['verdict'] === v)),
      ...AGREEMENT.filter((a) => marks.some((r) => r['agreement'] === a)),
    ],
    spec: document(title, {
      data: { values: data },
      // A width, not a step: the print sizes it to the page (pdf.ts).
      width: (overlay ? 56 : 40) * xs.length,
      height: { step: overlay ? 40 : 30 },
      layer: layers,
    }),
  };
}

/**
 * The edges of the map's cells where a prediction changes: for each cell, its bottom edge
 * (h) when the cell below is predicted otherwise, and its right edge (v) when the cell to its
 * right is; `xs` left to right, `ys` top to bottom, as drawn. Together: a step line.
 */
export function boundaryEdges(
  p: PredictedRegion,
  xs: readonly (string | number)[],
  ys: readonly (string | number)[],
): Row[] {
  const at = (x: string | number, y: string | number): boolean | undefined =>
    p.cells.find((c) => c.x === x && c.y === y)?.metastable;
  const out: Row[] = [];
  xs.forEach((x, i) =>
    ys.forEach((y, j) => {
      const here = at(x, y);
      if (here === undefined) return;
      const below = j + 1 < ys.length ? at(x, ys[j + 1]!) : undefined;
      const right = i + 1 < xs.length ? at(xs[i + 1]!, y) : undefined;
      if (below !== undefined && below !== here) out.push({ layer: 'boundary-h', x, y });
      if (right !== undefined && right !== here) out.push({ layer: 'boundary-v', x, y });
    }),
  );
  return out;
}

/**
 * A two-factor grid's interaction plots, one per figure of merit: the first factor on x,
 * one line per level of the second, each point the mean over the cell's valid runs with
 * its 95% CI. Parallel lines: the factors act apart; lines that cross or fan: they interact.
 */
function gridLines(t: SweepTable): Figure[] {
  const [fx, fy] = [t.factors[0]!, t.factors[1]!];
  const axis = factorAxis(
    fx,
    t.rows.map((r) => r.factors[fx.name]),
  );
  const groupsOrder = sortedLevels(t.rows.map((r) => r.factors[fy.name])).map((v) => `${fy.name} ${v}`);
  return measuredFigures(t, t.rows).map((m) => {
    const data: Row[] = t.rows.map((r) => {
      const st = pointStat(r, m.name);
      const v = r.factors[fx.name];
      return {
        factor: v ?? null,
        x: v === undefined ? null : axis.at(v),
        group: `${fy.name} ${r.factors[fy.name] ?? '?'}`,
        value: st.value,
        low: st.low,
        high: st.high,
        runs: st.n,
        verdict: r.verdict,
      };
    });
    const groups = groupsOrder.filter((g) => data.some((d) => d['group'] === g));
    const title = `Interaction: ${m.name} against ${fx.name}, by ${fy.name}`;
    const yTitle = axisTitle(m.name, m.unit);
    const yFlat = flatDomain(data);
    const x = {
      field: 'x',
      type: axis.type,
      title: axis.title,
      ...xScale(axis),
    };
    const color = {
      field: 'group',
      type: 'nominal',
      title: null,
      sort: groups,
      legend: { columns: legendColumns(groups) },
    };
    return {
      id: `sweep-interaction-${slug(m.name)}`,
      title,
      caption:
        `Interaction plot: ${m.name} against ${fx.name}, one line per level of ${fy.name}; each point the mean over the combination's valid runs with its 95% confidence interval (t distribution) where it has several, shaped by verdict. Parallel lines: the two factors act independently; lines that converge, diverge or cross: they interact.` +
        (data.some((d) => d['verdict'] === 'invalid' && d['value'] === null)
          ? ' A combination with no valid run (invalid) is a dashed line labelled "invalid".'
          : ''),
      data,
      series: groups,
      spec: document(title, {
        data: { values: data },
        layer: [
          {
            mark: { type: 'line', strokeWidth: 1.4 },
            params: [{ name: 'zoom', select: 'interval', bind: 'scales' }],
            encoding: { x, y: { field: 'value', type: 'quantitative', title: yTitle, ...yFlat }, color },
          },
          ...(hasCi(data) ? [errorBars(x, yTitle, color)] : []),
          ...invalidMarks(x, data),
          {
            mark: { type: 'point', filled: true, size: 50 },
            encoding: {
              x,
              y: { field: 'value', type: 'quantitative', title: yTitle, ...yFlat },
              color,
              shape: {
                field: 'verdict',
                type: 'nominal',
                title: 'verdict',
                legend: { columns: legendColumns(VERDICTS) },
                scale: { domain: VERDICTS, range: VERDICT_SHAPES },
              },
              tooltip: [
                { field: 'factor', title: fx.name },
                { field: 'group' },
                { field: 'value', type: 'quantitative', title: m.name },
                { field: 'low', type: 'quantitative', title: '95% CI low' },
                { field: 'high', type: 'quantitative', title: '95% CI high' },
                { field: 'runs', type: 'quantitative', title: 'valid runs' },
                { field: 'verdict' },
              ],
            },
          },
        ],
      }),
    };
  });
}

/**
 * A two-factor grid's main-effect plots, one per figure of merit: for each factor, the
 * mean over every valid run at each of its levels (the other factor's levels pooled),
 * with its 95% CI.
 */
function mainEffects(t: SweepTable): Figure[] {
  const factors = t.factors.slice(0, 2);
  return measuredFigures(t, t.rows).map((m) => {
    const data: Row[] = [];
    for (const f of factors) {
      const axis = factorAxis(
        f,
        t.rows.map((r) => r.factors[f.name]),
      );
      for (const level of sortedLevels(t.rows.map((r) => r.factors[f.name]))) {
        const at = t.rows.filter((r) => r.factors[f.name] === level);
        const values = at.flatMap((r) => r.perRun?.[m.name] ?? [r.figures[m.name] ?? null]);
        const d = distribution(values);
        data.push({
          factor: f.name,
          level,
          x: axis.at(level),
          value: d.mean,
          low: d.ci95 && at.every((r) => r.perRun) ? rounded(d.ci95[0]) : null,
          high: d.ci95 && at.every((r) => r.perRun) ? rounded(d.ci95[1]) : null,
          runs: d.count,
        });
      }
    }
    const yTitle = axisTitle(m.name, m.unit);
    const yFlat = flatDomain(data);
    const title = `Main effects on ${m.name}`;
    const panels = factors.map((f) => {
      const axis = factorAxis(
        f,
        t.rows.map((r) => r.factors[f.name]),
      );
      const x = {
        field: 'x',
        type: axis.type,
        title: axis.title,
        ...xScale(axis),
      };
      return {
        transform: [{ filter: { field: 'factor', equal: f.name } }],
        layer: [
          {
            mark: { type: 'line', color: '#555555', strokeWidth: 1.2, point: { filled: true, size: 50 } },
            encoding: {
              x,
              y: { field: 'value', type: 'quantitative', title: yTitle, ...yFlat },
              tooltip: [
                { field: 'level', title: f.name },
                { field: 'value', type: 'quantitative', title: m.name },
                { field: 'low', type: 'quantitative', title: '95% CI low' },
                { field: 'high', type: 'quantitative', title: '95% CI high' },
                { field: 'runs', type: 'quantitative', title: 'valid runs' },
              ],
            },
          },
          ...(hasCi(data.filter((r) => r['factor'] === f.name)) ? [errorBars(x, yTitle)] : []),
        ],
      };
    });
    return {
      id: `sweep-main-${slug(m.name)}`,
      title,
      caption: `Main effects on ${m.name}: for ${factors.map((f) => f.name).join(' and ')}, the mean over every valid run at each level (the other factor's levels pooled), with its 95% confidence interval (t distribution).`,
      data,
      series: factors.map((f) => f.name),
      spec: document(title, { data: { values: data }, hconcat: panels, resolve: { scale: { y: 'shared' } } }),
    };
  });
}

function slug(s: string): string {
  return s
    .replace(/[^A-Za-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
    .toLowerCase();
}
