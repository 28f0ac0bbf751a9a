import { CATEGORY_COLORS, DASHES, PRINT_CONFIG, TRIGGER_SHADE } from '../theme.js';
import type { VlSpec } from '../svg.js';
import { round } from '../../../foundation/round.js';

export type Cell = string | number | null;
export type Row = Record<string, Cell>;

/**
 * One figure: a Vega-Lite spec with its data inline, the same data as rows (written
 * beside the SVG as CSV), and the names of the series it draws (each appears in the
 * SVG as a legend entry or an axis title).
 */
export interface Figure {
  /** File name stem: figures/<id>.svg, figures/<id>.csv, figures/<id>.vl.json. */
  readonly id: string;
  readonly title: string;
  /** One sentence for the report: what the figure shows. */
  readonly caption: string;
  readonly spec: VlSpec;
  readonly data: readonly Row[];
  readonly series: readonly string[];
}

export const TIME_AXIS = 'time since start (s)';

/**
 * A figure document: the print config around one chart or a vertical stack of them.
 * `title` is the figure's name for the report's caption, never drawn in the figure: a
 * thesis sets its own caption under it, and a title drawn above would be a second one
 * over a blank band. The spec's `description` keeps it (screen readers read it).
 */
export function document(title: string, chart: VlSpec): VlSpec {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    description: title,
    config: PRINT_CONFIG,
    ...chart,
  };
}

/** Colour and dash scales for a fixed list of series labels (same order, same look, every figure). */
export function seriesEncoding(labels: readonly string[], field = 'series'): VlSpec {
  return {
    color: {
      field,
      type: 'nominal',
      title: null,
      sort: labels,
      scale: { domain: labels, range: labels.map((_, i) => CATEGORY_COLORS[i % CATEGORY_COLORS.length]) },
    },
    strokeDash: {
      field,
      type: 'nominal',
      title: null,
      sort: labels,
      scale: { domain: labels, range: labels.map((_, i) => DASHES[i % DASHES.length]) },
    },
  };
}

export interface TimeWindow {
  readonly startS: number;
  readonly endS: number;
}

/** The trigger window, shaded over the whole height, labelled at the top. */
export function triggerLayers(w: TimeWindow | null): VlSpec[] {
  if (!w) return [];
  const values = [{ start: w.startS, end: w.endS, label: 'trigger' }];
  return [
    {
      data: { values },
      mark: { type: 'rect', color: TRIGGER_SHADE.color, opacity: TRIGGER_SHADE.opacity },
      encoding: {
        x: { field: 'start', type: 'quantitative' },
        x2: { field: 'end' },
      },
    },
    {
      data: { values },
      mark: { type: 'text', align: 'left', baseline: 'top', dx: 2, dy: 2, fontSize: 10, color: '#444444' },
      encoding: {
        x: { field: 'end', type: 'quantitative' },
        y: { value: 0 },
        text: { field: 'label' },
      },
    },
  ];
}

/** The shading of each phase of a run, by name (the trigger darkest; the observation plain). */
export const PHASE_SHADES: Readonly<Record<string, { label: string; color: string; opacity: number }>> = {
  warmup: { label: 'warm-up', color: '#999999', opacity: 0.18 },
  baseline: { label: 'baseline', color: '#0072B2', opacity: 0.06 },
  trigger: { label: 'trigger', color: TRIGGER_SHADE.color, opacity: TRIGGER_SHADE.opacity },
  observe: { label: 'observation', color: '#ffffff', opacity: 0 },
};

export interface PhaseBand {
  readonly phase: string;
  readonly label: string;
  readonly start: number;
  readonly end: number;
}

/**
 * The phases of a run as bands over its time axis, from timeseries.csv's `phase` column
 * (one band per stretch of seconds in the same phase; a phase not named in PHASE_SHADES,
 * such as the drain after the schedule, gets none).
 */
export function phaseBands(
  t: readonly (number | null)[],
  phase: readonly (string | number | null)[],
): PhaseBand[] {
  const out: PhaseBand[] = [];
  phase.forEach((p, i) => {
    const ti = t[i];
    if (typeof p !== 'string' || ti === null || ti === undefined || !(p in PHASE_SHADES)) return;
    const last = out.at(-1);
    if (last && last.phase === p && last.end === ti) out[out.length - 1] = { ...last, end: ti + 1 };
    else out.push({ phase: p, label: PHASE_SHADES[p]!.label, start: ti, end: ti + 1 });
  });
  return out;
}

/** The phases shaded over the whole height, each labelled at its top left. */
export function phaseLayers(bands: readonly PhaseBand[]): VlSpec[] {
  if (bands.length === 0) return [];
  const values = bands.map((b) => ({ ...b }));
  // One layer per shaded phase, its colour fixed: no colour scale to clash with the series'.
  const shaded = Object.entries(PHASE_SHADES).filter(
    ([name, p]) => p.opacity > 0 && bands.some((b) => b.phase === name),
  );
  return [
    ...shaded.map(([name, p]) => ({
      data: { values: values.filter((b) => b.phase === name) },
      mark: { type: 'rect', color: p.color, opacity: p.opacity },
      encoding: {
        x: { field: 'start', type: 'quantitative' },
        x2: { field: 'end' },
      },
    })),
    // Labels on two rows, alternating, so a short phase's label does not overprint the next one's.
    ...[0, 1]
      .map((row) => values.filter((_, i) => i % 2 === row))
      .filter((vs) => vs.length > 0)
      .map((vs, row) => bandLabels(vs, row)),
  ];
}

/** The labels of shaded bands ({ start, label }), each at its band's top left; `row` steps them down a line. */
export function bandLabels(values: readonly object[], row = 0): VlSpec {
  return {
    data: { values },
    mark: {
      type: 'text',
      align: 'left',
      baseline: 'top',
      dx: 2,
      dy: 2 + 12 * row,
      fontSize: 10,
      color: '#444444',
    },
    encoding: {
      x: { field: 'start', type: 'quantitative' },
      y: { value: 0 },
      text: { field: 'label' },
    },
  };
}

/** A horizontal rule with a label at its right end (a capacity). */
export function labelledRule(y: number, label: string, opts: { dashed?: boolean } = {}): VlSpec[] {
  const values = [{ y, label }];
  return [
    {
      data: { values },
      mark: { type: 'rule', color: '#000000', strokeWidth: 1, strokeDash: opts.dashed ? [5, 3] : [1, 0] },
      encoding: { y: { field: 'y', type: 'quantitative' } },
    },
    {
      data: { values },
      mark: {
        type: 'text',
        align: 'right',
        baseline: 'bottom',
        dx: -2,
        dy: -2,
        fontSize: 10,
        color: '#000000',
      },
      encoding: {
        x: { value: { expr: 'width' } },
        y: { field: 'y', type: 'quantitative' },
        text: { field: 'label' },
      },
    },
  ];
}

/** A vertical marker with a label (the recovery point, a deadline, a saturation point). */
export function markerLayers(
  x: number,
  label: string,
  opts: { dashed?: boolean; color?: string } = {},
): VlSpec[] {
  const values = [{ x, label }];
  const color = opts.color ?? '#000000';
  return [
    {
      data: { values },
      mark: { type: 'rule', color, strokeWidth: 1.2, strokeDash: opts.dashed ? [4, 3] : [1, 0] },
      encoding: { x: { field: 'x', type: 'quantitative' } },
    },
    {
      data: { values },
      mark: { type: 'text', align: 'left', baseline: 'bottom', dx: 3, dy: -3, fontSize: 10, color },
      encoding: {
        x: { field: 'x', type: 'quantitative' },
        y: { value: { expr: 'height' } },
        text: { field: 'label' },
      },
    },
  ];
}

/** A horizontal reference line (amplification 1, goodput = offered…). */
export function referenceRule(y: number): VlSpec {
  return {
    data: { values: [{ y }] },
    mark: { type: 'rule', color: '#777777', strokeDash: [2, 2] },
    encoding: { y: { field: 'y', type: 'quantitative' } },
  };
}

/** How far below 0 a linear time axis reaches, in pixels: a series at 0 stays visible. */
export const ZERO_PADDING_PX = 5;

/**
 * Lines over time for a set of labelled series (long rows {t_s, series, value});
 * a gap where a value is not measured, never a line drawn through it.
 */
export function timeLinesLayer(
  rows: readonly Row[],
  labels: readonly string[],
  yTitle: string,
  opts: { log?: boolean; domainS?: readonly [number, number]; step?: boolean } = {},
): VlSpec {
  return {
    data: { values: rows },
    mark: {
      type: 'line',
      interpolate: opts.step ? 'step-after' : 'linear',
      invalid: 'break-paths-show-domains',
      clip: true,
    },
    params: [{ name: 'zoom', select: 'interval', bind: 'scales' }],
    encoding: {
      x: {
        field: 't_s',
        type: 'quantitative',
        title: TIME_AXIS,
        ...(opts.domainS ? { scale: { domain: opts.domainS, nice: false } } : {}),
      },
      y: {
        field: 'value',
        type: 'quantitative',
        title: yTitle,
        // A few pixels below 0 (linear) so a series at 0 is drawn above the x axis, not hidden by it.
        scale: opts.log ? { type: 'log' } : { padding: ZERO_PADDING_PX },
      },
      ...seriesEncoding(labels),
      tooltip: [
        { field: 't_s', type: 'quantitative', title: 'time (s)' },
        { field: 'series', type: 'nominal', title: 'series' },
        { field: 'value', type: 'quantitative', title: yTitle, format: ',.3~f' },
      ],
    },
  };
}

/** `round`, or null for a figure that was not measured (null, NaN, ±∞). */
export function rounded(x: number | null, digits = 3): number | null {
  return x === null || !Number.isFinite(x) ? null : round(x, digits);
}
