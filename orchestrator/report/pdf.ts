import { createRequire } from 'node:module';

// pdfkit and svg-to-pdfkit are imported on first use (a quarter of a second to load, which
// every command paid when they were imported up front).
type PdfLibs = [typeof import('pdfkit'), (typeof import('svg-to-pdfkit'))['default']];
let libs: Promise<PdfLibs> | undefined;
const loadPdfkit = (): Promise<PdfLibs> =>
  (libs ??= Promise.all([
    import('pdfkit').then((m) => m.default),
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

const require = createRequire(import.meta.url);
const FONT_FILES = {
  regular: require.resolve('@fontsource/source-sans-3/files/source-sans-3-latin-400-normal.woff'),
  bold: require.resolve('@fontsource/source-sans-3/files/source-sans-3-latin-700-normal.woff'),
};

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
  doc.registerFont('Figure', FONT_FILES.regular);
  doc.registerFont('Figure-Bold', FONT_FILES.bold);
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
