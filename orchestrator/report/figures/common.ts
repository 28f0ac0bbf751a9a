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

/** A figure document: the print config and a title around one chart or a vertical stack of them. */
export function document(title: string, chart: VlSpec): VlSpec {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title,
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
        ...(opts.log ? { scale: { type: 'log' } } : {}),
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
