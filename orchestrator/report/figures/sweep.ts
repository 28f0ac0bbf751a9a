import type { SweepTable, SweepVerdict } from '../tables.js';
import { PALETTE } from '../theme.js';
import { document, type Figure, type Row } from './common.js';

/**
 * Verdict colours: metastable vermillion, recovered green, unmeasured grey, invalid (no
 * valid run at the point) black (and shapes, for greyscale print).
 */
const VERDICTS: readonly SweepVerdict[] = ['metastable', 'recovered', 'unmeasured', 'invalid'];
const VERDICT_COLORS = [PALETTE.vermillion, PALETTE.green, '#999999', PALETTE.black];
const VERDICT_SHAPES = ['triangle-up', 'circle', 'cross', 'square'];

function axisTitle(name: string, unit: string): string {
  return `${name} (${unit})`;
}

function fieldType(values: readonly (string | number | undefined)[]): 'quantitative' | 'ordinal' {
  return values.every((v) => typeof v === 'number') ? 'quantitative' : 'ordinal';
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
export function sweepFigures(t: SweepTable, overlay?: MapOverlay): Figure[] {
  if (t.design === 'grid' && t.factors.length === 2) return [metastableMap(t, overlay), ...gridLines(t)];
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

const AGREEMENT = ['agrees', 'disagrees', 'not compared'];
const AGREEMENT_SHAPES = ['circle', 'cross', 'square'];

function rowsFor(t: SweepTable, factor: string): SweepTable['rows'] {
  if (t.factors.length === 1) return t.rows;
  return t.rows.filter((r) => r.varied === factor || r.varied === undefined);
}

function factorFigure(t: SweepTable, f: SweepTable['factors'][number]): Figure {
  const rows = rowsFor(t, f.name);
  const data: Row[] = [];
  for (const r of rows)
    for (const m of t.figures)
      data.push({
        factor: r.factors[f.name] ?? null,
        figure: m.name,
        value: r.figures[m.name] ?? null,
        verdict: r.verdict,
      });
  const xType = fieldType(rows.map((r) => r.factors[f.name]));
  const x = {
    field: 'factor',
    type: xType,
    title: axisTitle(f.name, f.unit),
    sort: xType === 'ordinal' ? null : undefined,
  };
  const title = `Figures of merit against ${f.name}`;
  const panels = t.figures.map((m) => ({
    height: 120,
    transform: [{ filter: { field: 'figure', equal: m.name } }],
    layer: [
      {
        mark: { type: 'line', color: '#555555', strokeWidth: 1.2 },
        encoding: { x, y: { field: 'value', type: 'quantitative', title: axisTitle(m.name, m.unit) } },
      },
      {
        mark: { type: 'point', filled: true, size: 70, opacity: 1 },
        params: [{ name: 'zoom', select: 'interval', bind: 'scales' }],
        encoding: {
          x,
          y: { field: 'value', type: 'quantitative', title: axisTitle(m.name, m.unit) },
          color: {
            field: 'verdict',
            type: 'nominal',
            title: 'verdict',
            scale: { domain: VERDICTS, range: VERDICT_COLORS },
          },
          shape: {
            field: 'verdict',
            type: 'nominal',
            title: 'verdict',
            scale: { domain: VERDICTS, range: VERDICT_SHAPES },
          },
          tooltip: [
            { field: 'factor', title: f.name },
            { field: 'value', type: 'quantitative', title: m.name },
            { field: 'verdict', type: 'nominal' },
          ],
        },
      },
      ...(f.reference !== undefined && xType === 'quantitative'
        ? [
            {
              data: { values: [{ factor: f.reference, label: 'reference' }] },
              mark: { type: 'rule', strokeDash: [4, 3], color: '#000000' },
              encoding: { x: { field: 'factor', type: 'quantitative' } },
            },
          ]
        : []),
    ],
  }));
  return {
    id: `sweep-${slug(f.name)}`,
    title,
    caption: `${t.figures.map((m) => m.name).join(', ')} against ${f.name} (${rows.length} points${f.reference !== undefined ? `, reference ${f.reference}` : ''}); each point coloured and shaped by its verdict.`,
    data,
    series: t.figures.map((m) => m.name),
    spec: document(title, { data: { values: data }, vconcat: panels }),
  };
}

function metastableMap(t: SweepTable, overlay?: MapOverlay): Figure {
  const [fx, fy] = [t.factors[0]!, t.factors[1]!];
  const cells: Row[] = t.rows.map((r) => ({
    ...(overlay ? { layer: 'cell' } : {}),
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
  const sortOf = (vals: (string | number)[]) =>
    vals.every((v) => typeof v === 'number')
      ? [...new Set(vals)].sort((a, b) => (a as number) - (b as number))
      : [...new Set(vals)];
  const defined = (v: Row[string] | undefined): v is string | number => v !== undefined && v !== null;
  const xs = sortOf(data.map((r) => r['x']).filter(defined));
  const ys = sortOf(data.map((r) => r['y']).filter(defined)).reverse();
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
    scale: { domain: VERDICTS, range: VERDICT_COLORS },
  };
  const only = (layer: string) =>
    overlay ? { transform: [{ filter: { field: 'layer', equal: layer } }] } : {};
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
      : `The verdict for every combination of ${fx.name} and ${fy.name}: metastable (vermillion), recovered (green), unmeasured (grey), invalid (black: no valid run); labels give metastable runs / valid runs where repeated, and the invalid runs (M metastable, R recovered, I invalid otherwise).`,
    data,
    series: [
      ...VERDICTS.filter((v) => data.some((r) => r['verdict'] === v)),
      ...AGREEMENT.filter((a) => marks.some((r) => r['agreement'] === a)),
    ],
    spec: document(title, {
      data: { values: data },
      width: { step: overlay ? 56 : 40 },
      height: { step: overlay ? 40 : 30 },
      layer: layers,
    }),
  };
}

function gridLines(t: SweepTable): Figure[] {
  const [fx, fy] = [t.factors[0]!, t.factors[1]!];
  return t.figures.map((m) => {
    const data: Row[] = t.rows.map((r) => ({
      x: r.factors[fx.name] ?? null,
      group: `${fy.name} ${r.factors[fy.name] ?? '?'}`,
      value: r.figures[m.name] ?? null,
      verdict: r.verdict,
    }));
    const groups = [...new Set(data.map((d) => String(d.group)))];
    const xType = fieldType(t.rows.map((r) => r.factors[fx.name]));
    const title = `${m.name} against ${fx.name}, by ${fy.name}`;
    return {
      id: `sweep-${slug(m.name)}`,
      title,
      caption: `${m.name} against ${fx.name}, one line per value of ${fy.name}; points shaped by verdict.`,
      data,
      series: groups,
      spec: document(title, {
        data: { values: data },
        layer: [
          {
            mark: { type: 'line', strokeWidth: 1.4 },
            params: [{ name: 'zoom', select: 'interval', bind: 'scales' }],
            encoding: {
              x: { field: 'x', type: xType, title: axisTitle(fx.name, fx.unit) },
              y: { field: 'value', type: 'quantitative', title: axisTitle(m.name, m.unit) },
              color: { field: 'group', type: 'nominal', title: null, sort: groups },
            },
          },
          {
            mark: { type: 'point', filled: true, size: 50 },
            encoding: {
              x: { field: 'x', type: xType, title: axisTitle(fx.name, fx.unit) },
              y: { field: 'value', type: 'quantitative', title: axisTitle(m.name, m.unit) },
              color: { field: 'group', type: 'nominal', title: null, sort: groups },
              shape: {
                field: 'verdict',
                type: 'nominal',
                title: 'verdict',
                scale: { domain: VERDICTS, range: VERDICT_SHAPES },
              },
              tooltip: [
                { field: 'x', title: fx.name },
                { field: 'group' },
                { field: 'value', type: 'quantitative', title: m.name },
                { field: 'verdict' },
              ],
            },
          },
        ],
      }),
    };
  });
}

function slug(s: string): string {
  return s
    .replace(/[^A-Za-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
    .toLowerCase();
}
