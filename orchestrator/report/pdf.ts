import { createRequire } from 'node:module';
import { renderSvg, type VlSpec } from './svg.js';
import { PRINT_CONFIG, WIDTH_PX } from './theme.js';
import { FONT_FILES } from './textWidth.js';
import { sfntOf } from './sfnt.js';
import { shareFontLayouts } from './fontLayouts.js';

// pdfkit and svg-to-pdfkit are imported on first use (a quarter of a second to load, which
// every command paid when they were imported up front). pdfkit is required, as the text
// measurer (textWidth.ts) requires it: its ES module build is a second copy of pdfkit and
// its font library, loaded again (a fifth of a second per report).
type PdfLibs = [typeof import('pdfkit'), (typeof import('svg-to-pdfkit'))['default']];
let libs: Promise<PdfLibs> | undefined;
export const loadPdfkit = (): Promise<PdfLibs> =>
  (libs ??= Promise.all([
    createRequire(import.meta.url)('pdfkit') as typeof import('pdfkit'),
    import('svg-to-pdfkit').then((m) => m.default),
  ]));

/**
 * Figures as vector PDF, for LaTeX (\includegraphics takes PDF, not SVG): vega's own SVG
 * drawn by svg-to-pdfkit into a pdfkit page. Text stays text (selectable, searchable)
 * in Source Sans 3, the first font of the figures' stack (theme.ts), embedded as a
 * subset from the @fontsource package, so a PDF looks the same on every machine and
 * needs no font installed where the thesis is built.
 */

/** Figure widths a thesis uses: one column of a two-column page, or the full text width. */
export const PDF_WIDTHS = { column: 8.5, text: 16 } as const;
export type PdfWidth = keyof typeof PDF_WIDTHS;
/** The size the figures' axis labels print at in a PDF (a thesis's captions are ~9–10 pt). */
export const PDF_TEXT_PT = 8;

const PT_PER_CM = 72 / 2.54;

/**
 * A figure as it prints at `width`: the whole figure that many px wide that its text
 * prints at PDF_TEXT_PT once scaled to the page (the SVG's 11 px labels at 8.5 cm would
 * otherwise print at under 6 pt). The plot width is what gives: the config's width of
 * every continuous view, and a single view's own width (the map of a grid); the figure's
 * width grows with it by as many plots as sit side by side, found by the secant method
 * (two or three renders).
 */
export async function printFigure(spec: VlSpec, width: PdfWidth): Promise<{ spec: VlSpec; svg: string }> {
  const target = (PDF_WIDTHS[width] / 2.54) * 72 * (PRINT_CONFIG.axis.labelFontSize / PDF_TEXT_PT);
  const config = (spec['config'] ?? PRINT_CONFIG) as typeof PRINT_CONFIG;
  const sized = (plotPx: number): VlSpec => ({
    ...spec,
    ...(typeof spec['width'] === 'number' ? { width: plotPx } : {}),
    config: { ...config, view: { ...config.view, continuousWidth: plotPx } },
  });
  const at = async (plotPx: number) => {
    const s = sized(plotPx);
    const { svg } = await renderSvg(s);
    return { plotPx, spec: s, svg, width: svgSize(svg).width };
  };
  let prev = await at(WIDTH_PX);
  let slope = 1;
  for (let i = 0; i < 3 && Math.abs(prev.width - target) > 1; i++) {
    const next = await at(Math.max(60, Math.round(prev.plotPx + (target - prev.width) / slope)));
    if (next.plotPx === prev.plotPx) break;
    // Plots side by side each grow by the step: the figure by that many times it.
    slope = Math.max(1, Math.round((next.width - prev.width) / (next.plotPx - prev.plotPx)));
    prev = next;
  }
  return { spec: prev.spec, svg: prev.svg };
}

/** The spec of `printFigure`. */
export async function printSpec(spec: VlSpec, width: PdfWidth): Promise<VlSpec> {
  return (await printFigure(spec, width)).spec;
}

/** The SVG's own size in px (vega writes width and height on its root element). */
export function svgSize(svg: string): { width: number; height: number } {
  const root = /<svg\b[^>]*>/.exec(svg)?.[0] ?? '';
  const attr = (name: string): number => Number(new RegExp(`\\b${name}="([\\d.]+)"`).exec(root)?.[1] ?? NaN);
  const width = attr('width');
  const height = attr('height');
  if (!(width > 0 && height > 0)) throw new Error('the SVG has no width and height on its root element');
  return { width, height };
}

/**
 * The SVG as pdfkit can draw it: a dash pattern with a zero-length segment (the theme's
 * `1,0`, a solid line in SVG) is refused by pdfkit, so it is drawn solid.
 */
function printable(svg: string): string {
  return svg.replace(/ stroke-dasharray="([^"]*)"/g, (m, d: string) =>
    d.split(/[\s,]+/).some((x) => Number(x) <= 0) ? '' : m,
  );
}

/**
 * One figure's SVG as a one-page PDF `widthCm` wide (the height keeps the SVG's aspect),
 * the drawing scaled to the page, text in the embedded font. Deterministic: no creation
 * date, so the same figure gives the same file.
 */
export async function svgToPdf(svg: string, widthCm: number, title = ''): Promise<Buffer> {
  const [PDFDocument, SVGtoPDF] = await loadPdfkit();
  const { width, height } = svgSize(svg);
  const w = widthCm * PT_PER_CM;
  const h = (w * height) / width;
  const doc = new PDFDocument({
    size: [w, h],
    margin: 0,
    compress: true,
    info: { Title: title, Creator: 'metabench', Producer: 'metabench (pdfkit)', CreationDate: new Date(0) },
  });
  shareFontLayouts(doc);
  doc.registerFont('Figure', sfntOf(FONT_FILES.regular));
  doc.registerFont('Figure-Bold', sfntOf(FONT_FILES.bold));
  const chunks: Buffer[] = [];
  doc.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
  SVGtoPDF(doc, printable(svg), 0, 0, {
    width: w,
    height: h,
    preserveAspectRatio: 'xMinYMin meet',
    // Every family of the stack is the embedded one (svg-to-pdfkit would fall back to a
    // standard font, not embedded, with no glyph beyond Latin-1).
    fontCallback: (_family: string, bold: boolean) => (bold ? 'Figure-Bold' : 'Figure'),
  });
  doc.end();
  return await done;
}
