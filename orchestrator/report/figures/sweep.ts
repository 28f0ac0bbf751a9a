import type { SweepTable, SweepVerdict } from '../tables.js';
import { PALETTE } from '../theme.js';
import { document, type Figure, type Row } from './common.js';

/** Verdict colours: metastable vermillion, recovered green, unmeasured grey (and shapes, for greyscale print). */
const VERDICTS: readonly SweepVerdict[] = ['metastable', 'recovered', 'unmeasured'];
const VERDICT_COLORS = [PALETTE.vermillion, PALETTE.green, '#999999'];
const VERDICT_SHAPES = ['triangle-up', 'circle', 'cross'];

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
export function sweepFigures(t: SweepTable): Figure[] {
  if (t.design === 'grid' && t.factors.length === 2) return [metastableMap(t), ...gridLines(t)];
  return t.factors.map((f) => factorFigure(t, f));
}

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

function metastableMap(t: SweepTable): Figure {
  const [fx, fy] = [t.factors[0]!, t.factors[1]!];
  const data: Row[] = t.rows.map((r) => ({
    x: r.factors[fx.name] ?? null,
    y: r.factors[fy.name] ?? null,
    verdict: r.verdict,
    label:
      r.runs !== undefined && r.metastableRuns !== undefined
        ? `${r.metastableRuns}/${r.runs}`
        : r.verdict === 'metastable'
          ? 'M'
          : r.verdict === 'recovered'
            ? 'R'
            : '?',
  }));
  const sortOf = (vals: (string | number)[]) =>
    vals.every((v) => typeof v === 'number')
      ? [...new Set(vals)].sort((a, b) => (a as number) - (b as number))
      : [...new Set(vals)];
  const xs = sortOf(
    t.rows.map((r) => r.factors[fx.name]).filter((v): v is string | number => v !== undefined),
  );
  const ys = sortOf(
    t.rows.map((r) => r.factors[fy.name]).filter((v): v is string | number => v !== undefined),
  ).reverse();
  const title = 'Metastable region';
  const enc = {
    x: { field: 'x', type: 'ordinal', title: axisTitle(fx.name, fx.unit), sort: xs, axis: { labelAngle: 0 } },
    y: { field: 'y', type: 'ordinal', title: axisTitle(fy.name, fy.unit), sort: ys },
  };
  return {
    id: 'sweep-map',
    title,
    caption: `The verdict for every combination of ${fx.name} and ${fy.name}: metastable (vermillion), recovered (green), unmeasured (grey); labels give metastable runs / runs where repeated (M metastable, R recovered otherwise).`,
    data,
    series: ['metastable', 'recovered', 'unmeasured'].filter((v) => t.rows.some((r) => r.verdict === v)),
    spec: document(title, {
      data: { values: data },
      width: { step: 40 },
      height: { step: 30 },
      layer: [
        {
          mark: { type: 'rect', stroke: 'white', strokeWidth: 1 },
          encoding: {
            ...enc,
            color: {
              field: 'verdict',
              type: 'nominal',
              title: 'verdict',
              scale: { domain: VERDICTS, range: VERDICT_COLORS },
            },
            tooltip: [
              { field: 'x', title: fx.name },
              { field: 'y', title: fy.name },
              { field: 'verdict', type: 'nominal' },
              { field: 'label', type: 'nominal', title: 'metastable runs' },
            ],
          },
        },
        {
          mark: { type: 'text', fontSize: 10, color: 'white' },
          encoding: { ...enc, text: { field: 'label' } },
        },
      ],
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
