import { test } from 'node:test';
import assert from 'node:assert/strict';
import { csv, runData } from '../../test/helpers/reportData.js';
import { runFigures } from './figures/run.js';
import { svgFiles } from './writeReport.js';
import { PDF_TEXT_PT, PDF_WIDTHS } from './pdf.js';

interface TextItem {
  readonly str: string;
  readonly transform: readonly number[];
}

/** Page size (cm), the text pdf.js extracts, and the fonts the file embeds. */
async function readPdf(
  bytes: Uint8Array,
): Promise<{ widthCm: number; items: TextItem[]; fonts: string[]; raw: string }> {
  const pdfjs = await import('pdfjs-dist/legacy/build/pdf.mjs');
  const raw = Buffer.from(bytes).toString('latin1');
  const doc = await pdfjs.getDocument({ data: new Uint8Array(bytes), disableFontFace: true, verbosity: 0 })
    .promise;
  assert.equal(doc.numPages, 1);
  const page = await doc.getPage(1);
  const content = await page.getTextContent();
  const items = content.items.filter((i): i is TextItem & typeof i => 'str' in i && i.str.trim() !== '');
  return {
    widthCm: ((page.view[2]! - page.view[0]!) / 72) * 2.54,
    items,
    fonts: [...raw.matchAll(/\/BaseFont \/([A-Z]{6}\+[^\s/]+)/g)].map((m) => m[1]!),
    raw,
  };
}

test('each figure has a vector PDF beside its SVG: sized to a column or the text width, the font embedded, its text real text', async () => {
  const figs = runFigures(runData(1, csv(12)), '').slice(0, 1);
  for (const width of ['column', 'text'] as const) {
    const files = await svgFiles(figs, () => {}, { pdf: width });
    assert.deepEqual(
      files.map((f) => f.path),
      ['figures/throughput.svg', 'figures/throughput.pdf'],
    );
    const pdf = files[1]!.content as Uint8Array;
    assert.equal(Buffer.from(pdf.subarray(0, 5)).toString(), '%PDF-');
    const { widthCm, items, fonts, raw } = await readPdf(pdf);
    assert.ok(Math.abs(widthCm - PDF_WIDTHS[width]) < 0.01, `${width}: ${widthCm} cm`);
    // The font is embedded (a subset, its program in the file), not a standard font the viewer substitutes.
    assert.ok(fonts.length > 0 && fonts.every((f) => f.includes('SourceSans3')), String(fonts));
    assert.match(raw, /\/FontFile2/);
    // Text, not paths: pdf.js reads the axis title, the capacity rule's label and the legend.
    const text = items.map((i) => i.str).join(' ');
    for (const s of [
      'time since start (s)',
      'requests per second (req/s)',
      'capacity 400/s (nominal)',
      'goodput',
    ])
      assert.ok(text.includes(s), `${width}: "${s}" not in the text: ${text}`);
    // Axis labels print at PDF_TEXT_PT whatever the width (the plot is drawn as wide as that allows).
    const tick = items.find((i) => i.str === '0')!;
    const pt = Math.hypot(tick.transform[0]!, tick.transform[1]!);
    assert.ok(Math.abs(pt - PDF_TEXT_PT) < 0.6, `${width}: tick labels at ${pt} pt`);
  }
  const none = await svgFiles(figs, () => {}, { pdf: 'none' });
  assert.deepEqual(
    none.map((f) => f.path),
    ['figures/throughput.svg'],
  );
});
