import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { sfntOf } from './sfnt.js';
import { shareFontLayouts } from './fontLayouts.js';

/**
 * The width of figure text in the font the figures print in (Source Sans 3, the file
 * embedded in every PDF), from the font's own advance widths. Vega without a canvas
 * guesses 0.8 em a character, about twice Source Sans 3's: a figure laid out on that
 * guess had a blank band above it (the rotated axis title "took" 260 px), its legend and
 * labels twice their width, and its plot squeezed into half the page.
 */

const require = createRequire(import.meta.url);

/** The font files of the figures (regular and bold), from the @fontsource package. */
export const FONT_FILES = {
  regular: require.resolve('@fontsource/source-sans-3/files/source-sans-3-latin-400-normal.woff'),
  bold: require.resolve('@fontsource/source-sans-3/files/source-sans-3-latin-700-normal.woff'),
} as const;

/** A pdfkit document with no page, used for its font metrics only (loaded on first use). */
let metrics: PDFKit.PDFDocument | undefined;
const cache = new Map<string, number>();

function measurer(): PDFKit.PDFDocument {
  if (metrics) return metrics;
  const PDFDocument = require('pdfkit') as typeof import('pdfkit');
  const doc = new PDFDocument({ autoFirstPage: false });
  // The words measured here are the ones the figures' PDFs draw: laid out once for both.
  shareFontLayouts(doc);
  doc.registerFont('regular', sfntOf(FONT_FILES.regular));
  doc.registerFont('bold', sfntOf(FONT_FILES.bold));
  return (metrics = doc);
}

/** The width of `text` in px at `fontSize` px. */
export function textWidth(text: string, fontSize: number, bold = false): number {
  if (text === '' || fontSize <= 0) return 0;
  const key = `${bold ? 'b' : 'r'}${text}`;
  let em = cache.get(key);
  if (em === undefined) {
    // Widths scale with the size: one measurement at 1 px serves every size.
    em = measurer()
      .font(bold ? 'bold' : 'regular')
      .fontSize(1)
      .widthOfString(text);
    if (cache.size > 20_000) cache.clear();
    cache.set(key, em);
  }
  return em * fontSize;
}

/** What vega passes to `textMetrics.width`: a text item (size in px, weight, width limit). */
interface TextItem {
  readonly fontSize?: number | string | null;
  readonly fontWeight?: number | string | null;
  readonly limit?: number | null;
}

const isBold = (w: TextItem['fontWeight']): boolean =>
  w === 'bold' || w === 'bolder' || (w !== null && w !== undefined && Number(w) >= 600);

/**
 * vega's `textMetrics.width(item, text)` in the figures' font. Capped at the item's
 * limit: vega truncates a longer text to it (with this same function), so the drawn
 * text is never wider.
 */
export function vegaTextWidth(item: TextItem, text: unknown): number {
  const s = text === null || text === undefined ? '' : String(text).trim();
  const size = item.fontSize === null || item.fontSize === undefined ? 11 : Number(item.fontSize) || 0;
  const w = textWidth(s, size, isBold(item.fontWeight));
  return item.limit && item.limit > 0 ? Math.min(w, item.limit) : w;
}

/**
 * Makes vega measure text with `vegaTextWidth`. Vega's packages may each hold their own
 * copy of vega-scenegraph (vega pins an older one than vega-view-transforms, which lays
 * the figures out): each copy's metrics are set, or the layout keeps the guess.
 */
export async function installTextWidth(): Promise<void> {
  const fromVega = createRequire(require.resolve('vega'));
  const copies = new Set<string>();
  for (const pkg of [
    'vega',
    'vega-view',
    'vega-view-transforms',
    'vega-parser',
    'vega-label',
    'vega-encode',
  ]) {
    try {
      const at = pkg === 'vega' ? fromVega : createRequire(fromVega.resolve(pkg));
      copies.add(at.resolve('vega-scenegraph'));
    } catch {
      // Not a package of this vega: nothing to set.
    }
  }
  await Promise.all(
    [...copies].map(async (file) => {
      const m = (await import(pathToFileURL(file).href)) as { textMetrics: { width: unknown } };
      m.textMetrics.width = vegaTextWidth;
    }),
  );
}
