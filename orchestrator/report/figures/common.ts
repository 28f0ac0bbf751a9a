import { CATEGORY_COLORS, DASHES, PRINT_CONFIG, TRIGGER_SHADE } from '../theme.js';
import type { VlSpec } from '../svg.js';
import { round } from '../../../foundation/round.js';
import { textWidth } from '../textWidth.js';

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
 * The print config, and legends of the same side stacked (one above the other), not side
 * by side: two legends in a row made a figure far wider than its plot.
 */
export const FIGURE_CONFIG = {
  ...PRINT_CONFIG,
  legend: { ...PRINT_CONFIG.legend, layout: { expr: "{bottom: {direction: 'vertical', anchor: 'start'}}" } },
};

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
    config: FIGURE_CONFIG,
    ...chart,
  };
}

/**
 * The narrowest plot a figure is drawn at (a one-column PDF, two panels to a row), in px:
 * annotations and legends are laid out to fit it, and so fit every wider one too.
 */
export const NARROWEST_PLOT_PX = 200;

/** The size of annotation text (phase, trigger and marker labels), px. */
const NOTE_FONT_PX = 10;

/**
 * Legend columns for these labels: as many as fit side by side in the narrowest plot, so
 * a legend is never wider than its plot (one long row made a figure twice its plot's width).
 */
export function legendColumns(labels: readonly string[]): number {
  const size = PRINT_CONFIG.legend.labelFontSize;
  // Symbol, its gap and the space between entries, besides the label.
  const entries = labels.map((l) => textWidth(l, size) + 36);
  const fits = (n: number): boolean => {
    // Entries fill the rows left to right; each column as wide as its widest entry.
    const widths = Array.from({ length: n }, (_, j) => Math.max(0, ...entries.filter((_, i) => i % n === j)));
    return widths.reduce((a, b) => a + b, 0) <= NARROWEST_PLOT_PX + 40;
  };
  let n = Math.max(1, labels.length);
  while (n > 1 && !fits(n)) n--;
  return n;
}

/** A series shown in the legend beside the data: a reference line (a capacity), black and solid or dashed. */
export interface LegendLine {
  readonly label: string;
  readonly dashed?: boolean;
}

/**
 * Colour and dash scales for a fixed list of series labels (same order, same look, every
 * figure), and reference lines after them (black), in one legend.
 */
export function seriesEncoding(
  labels: readonly string[],
  field = 'series',
  references: readonly LegendLine[] = [],
): VlSpec {
  const domain = [...labels, ...references.map((r) => r.label)];
  const legend = { columns: legendColumns(domain) };
  return {
    color: {
      field,
      type: 'nominal',
      title: null,
      sort: domain,
      legend,
      scale: {
        domain,
        range: [
          ...labels.map((_, i) => CATEGORY_COLORS[i % CATEGORY_COLORS.length]),
          ...references.map(() => '#000000'),
        ],
      },
    },
    strokeDash: {
      field,
      type: 'nominal',
      title: null,
      sort: domain,
      legend,
      scale: {
        domain,
        range: [
          ...labels.map((_, i) => DASHES[i % DASHES.length]),
          ...references.map((r) => (r.dashed ? [5, 3] : [1, 0])),
        ],
      },
    },
  };
}

export interface TimeWindow {
  readonly startS: number;
  readonly endS: number;
}

/** The trigger window, shaded over the whole height (its label: `triggerNote`). */
export function triggerLayers(w: TimeWindow | null): VlSpec[] {
  if (!w) return [];
  return [
    {
      data: { values: [{ start: w.startS, end: w.endS, label: 'trigger' }] },
      mark: { type: 'rect', color: TRIGGER_SHADE.color, opacity: TRIGGER_SHADE.opacity },
      encoding: {
        x: { field: 'start', type: 'quantitative' },
        x2: { field: 'end' },
      },
    },
  ];
}

/** The trigger window's label, above its start. */
export function triggerNote(w: TimeWindow | null): Annotation[] {
  return w ? [{ x: w.startS, label: 'trigger' }] : [];
}

/** A label above the plot at a point of its x axis (a phase's start, a marker). */
export interface Annotation {
  readonly x: number;
  readonly label: string;
  readonly color?: string;
}

/**
 * Annotations above the plot, where no data line or rule can run through them, each at
 * its x (left-aligned from it; right-aligned to it when it would run past the plot's end),
 * in as many rows as keep any two apart at the narrowest plot (wider ones spread them more).
 * `domain` is the x scale's domain (as the figure sets it).
 */
export function annotationLayers(notes: readonly Annotation[], domain: readonly [number, number]): VlSpec[] {
  if (notes.length === 0) return [];
  const span = domain[1] - domain[0] || 1;
  const gap = 4;
  const rowEnds: number[] = [];
  const placed = [...notes]
    .sort((a, b) => a.x - b.x)
    .map((n) => {
      const at = ((n.x - domain[0]) / span) * NARROWEST_PLOT_PX;
      const w = textWidth(n.label, NOTE_FONT_PX) + 2;
      const align = at + w > NARROWEST_PLOT_PX && at - w >= 0 ? ('right' as const) : ('left' as const);
      const [from, to] = align === 'left' ? [at, at + w] : [at - w, at];
      let row = rowEnds.findIndex((end) => end + gap <= from);
      if (row < 0) row = rowEnds.push(to) - 1;
      else rowEnds[row] = to;
      return { ...n, row, align };
    });
  const groups = new Map<string, typeof placed>();
  for (const p of placed) {
    const k = `${p.row} ${p.align} ${p.color ?? ''}`;
    groups.set(k, [...(groups.get(k) ?? []), p]);
  }
  return [...groups.values()].map((g) => ({
    data: { values: g.map((p) => ({ x: p.x, label: p.label })) },
    mark: {
      type: 'text',
      align: g[0]!.align,
      baseline: 'bottom',
      dx: g[0]!.align === 'left' ? 1 : -1,
      // Row 0 nearest the plot.
      dy: -3 - (NOTE_FONT_PX + 2) * g[0]!.row,
      fontSize: NOTE_FONT_PX,
      color: g[0]!.color ?? '#333333',
    },
    encoding: {
      x: { field: 'x', type: 'quantitative' },
      y: { value: 0 },
      text: { field: 'label' },
    },
  }));
}

/** The shading of each phase of a run, by name (the trigger darkest, every phase shaded). */
export const PHASE_SHADES: Readonly<Record<string, { label: string; color: string; opacity: number }>> = {
  warmup: { label: 'warm-up', color: '#999999', opacity: 0.18 },
  baseline: { label: 'baseline', color: '#0072B2', opacity: 0.06 },
  trigger: { label: 'trigger', color: TRIGGER_SHADE.color, opacity: TRIGGER_SHADE.opacity },
  observe: { label: 'observation', color: '#D55E00', opacity: 0.06 },
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

/** The phases shaded over the whole height (their labels: `phaseNotes`). */
export function phaseLayers(bands: readonly PhaseBand[]): VlSpec[] {
  // One layer per shaded phase, its colour fixed: no colour scale to clash with the series'.
  return Object.entries(PHASE_SHADES)
    .filter(([name, p]) => p.opacity > 0 && bands.some((b) => b.phase === name))
    .map(([name, p]) => ({
      data: { values: bands.filter((b) => b.phase === name).map((b) => ({ ...b })) },
      mark: { type: 'rect', color: p.color, opacity: p.opacity },
      encoding: {
        x: { field: 'start', type: 'quantitative' },
        x2: { field: 'end' },
      },
    }));
}

/** Each phase's label, above its start. */
export function phaseNotes(bands: readonly PhaseBand[]): Annotation[] {
  return bands.map((b) => ({ x: b.start, label: b.label }));
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

/**
 * A horizontal reference rule (a capacity), named in the figure's legend (give its
 * LegendLine to `seriesEncoding`): a label on the rule itself had lines and markers run
 * through it.
 */
export function legendRule(y: number, line: LegendLine, field = 'series'): VlSpec {
  return {
    data: { values: [{ y, [field]: line.label }] },
    mark: { type: 'rule', strokeWidth: 1 },
    encoding: {
      y: { field: 'y', type: 'quantitative' },
      color: { field, type: 'nominal', title: null },
      strokeDash: { field, type: 'nominal', title: null },
    },
  };
}

/** A vertical marker (the recovery point, a deadline, a saturation point); its label is an Annotation. */
export function markerRule(x: number, opts: { dashed?: boolean; color?: string } = {}): VlSpec {
  return {
    data: { values: [{ x }] },
    mark: {
      type: 'rule',
      color: opts.color ?? '#000000',
      strokeWidth: 1.2,
      strokeDash: opts.dashed ? [4, 3] : [1, 0],
    },
    encoding: { x: { field: 'x', type: 'quantitative' } },
  };
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
/** Room, in px, that keeps a point mark at the end of an axis whole (its radius and stroke). */
export const EDGE_PX = 8;

/**
 * Lines over time for a set of labelled series (long rows {t_s, series, value});
 * a gap where a value is not measured, never a line drawn through it.
 */
export function timeLinesLayer(
  rows: readonly Row[],
  labels: readonly string[],
  yTitle: string,
  opts: {
    log?: boolean;
    domainS?: readonly [number, number];
    step?: boolean;
    references?: readonly LegendLine[];
  } = {},
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
      ...seriesEncoding(labels, 'series', opts.references),
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
