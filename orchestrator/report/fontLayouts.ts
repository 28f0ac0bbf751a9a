/**
 * One text layout cache per font file for every pdfkit document of the process. pdfkit
 * lays each word out (glyphs, kerning: fontkit's shaping) once per document and font,
 * and each figure's PDF is a document of its own: every axis label was shaped again for
 * every figure, though the text measurer (textWidth.ts) had shaped the same words in the
 * same font file while vega laid the figure out. A layout depends on the font and the
 * text only (pdfkit keys its cache by the text), and pdfkit and svg-to-pdfkit only read
 * the runs they are given, so a shared run draws the same glyphs at the same places.
 */

/** What of pdfkit's internals this reads: the selected font, its source and its layout cache. */
interface Internals {
  _font?: { layoutCache?: Record<string, unknown> };
  _fontSource?: unknown;
}

/** The shared caches, by font source (the sfnt buffer of sfnt.ts, one per file per process). */
const caches = new WeakMap<object, Record<string, unknown>>();

/** Words a cache holds before it starts again (a long sweep writes many figures). */
const MAX_WORDS = 20_000;

function cacheOf(src: object): Record<string, unknown> {
  let c = caches.get(src);
  if (!c) caches.set(src, (c = Object.create(null) as Record<string, unknown>));
  return c;
}

/**
 * Makes `doc` lay its embedded fonts' text out through the process's shared caches: each
 * font it selects (pdfkit opens one per document) is given the cache of its font file.
 */
export function shareFontLayouts(doc: PDFKit.PDFDocument): void {
  const d = doc as PDFKit.PDFDocument & Internals;
  const select = doc.font;
  doc.font = function (this: PDFKit.PDFDocument, ...args: Parameters<typeof select>) {
    select.apply(this, args);
    const font = d._font;
    const src = d._fontSource;
    // Fonts embedded from a buffer have a cache (pdfkit's standard fonts have none).
    if (font?.layoutCache && typeof src === 'object' && src !== null) {
      let shared = cacheOf(src);
      if (font.layoutCache !== shared && Object.keys(shared).length > MAX_WORDS)
        caches.set(src, (shared = Object.create(null) as Record<string, unknown>));
      font.layoutCache = shared;
    }
    return this;
  } as typeof select;
}
