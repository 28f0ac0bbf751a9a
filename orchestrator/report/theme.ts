/**
 * Print settings shared by every figure: a thesis column is about 8–9 cm wide, so a
 * figure is ~420 px wide with 11–13 px text (about 8 pt once scaled to the column).
 * Colours are Okabe & Ito's colour-blind-safe palette, and series that share a chart
 * also differ by dash pattern so they stay apart in greyscale print.
 */

/** Okabe–Ito, in the order we hand colours out (black first, yellow last: it is faint on white). */
export const PALETTE = {
  black: '#000000',
  blue: '#0072B2',
  vermillion: '#D55E00',
  green: '#009E73',
  orange: '#E69F00',
  purple: '#CC79A7',
  sky: '#56B4E9',
  yellow: '#F0E442',
} as const;
export const CATEGORY_COLORS: readonly string[] = [
  PALETTE.blue,
  PALETTE.vermillion,
  PALETTE.green,
  PALETTE.orange,
  PALETTE.purple,
  PALETTE.sky,
  PALETTE.black,
  PALETTE.yellow,
];
/** Dash patterns to pair with CATEGORY_COLORS (solid first). */
export const DASHES: readonly (readonly number[])[] = [
  [1, 0],
  [6, 3],
  [2, 2],
  [8, 3, 2, 3],
  [4, 4],
  [1, 3],
];

/** A print font stack: the first one installed wins; SVG stays valid with none installed. */
export const FONT =
  "'Source Sans 3', 'Source Sans Pro', 'Helvetica Neue', Helvetica, Arial, 'Liberation Sans', sans-serif";

export const WIDTH_PX = 340;
export const HEIGHT_PX = 170;
/** Shading of the trigger window. */
export const TRIGGER_SHADE = { color: '#000000', opacity: 0.1 } as const;

/** Vega-Lite config applied to every figure. */
export const PRINT_CONFIG = {
  font: FONT,
  background: 'white',
  padding: 6,
  view: { continuousWidth: WIDTH_PX, continuousHeight: HEIGHT_PX, stroke: null },
  axis: {
    labelFontSize: 11,
    titleFontSize: 12,
    titleFontWeight: 'normal',
    labelColor: '#222222',
    titleColor: '#000000',
    domainColor: '#444444',
    tickColor: '#444444',
    gridColor: '#e4e4e4',
    labelFlush: true,
  },
  legend: {
    labelFontSize: 11,
    titleFontSize: 11,
    titleFontWeight: 'normal',
    orient: 'bottom',
    direction: 'horizontal',
    symbolStrokeWidth: 2,
    symbolSize: 120,
    labelLimit: 260,
  },
  title: { fontSize: 13, fontWeight: 'bold', anchor: 'start', offset: 8 },
  header: { labelFontSize: 11, titleFontSize: 12 },
  text: { fontSize: 11 },
  line: { strokeWidth: 1.6 },
  range: { category: CATEGORY_COLORS },
} as const;
