import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { shareFontLayouts } from './fontLayouts.js';
import { svgToPdf } from './pdf.js';
import { sfntOf } from './sfnt.js';
import { FONT_FILES } from './textWidth.js';

const PDFDocument = createRequire(import.meta.url)('pdfkit') as typeof import('pdfkit');
type WithCache = PDFKit.PDFDocument & { _font: { layoutCache: Record<string, unknown> } };

test('documents of one font file share its layouts: a word laid out in one is not laid out again in another', () => {
  const docs = [0, 1].map(() => {
    const doc = new PDFDocument({ autoFirstPage: false });
    shareFontLayouts(doc);
    doc.registerFont('one', sfntOf(FONT_FILES.regular));
    doc.registerFont('other', sfntOf(FONT_FILES.bold));
    return doc as WithCache;
  });
  docs[0]!.font('one').widthOfString('metastable');
  assert.ok('metastable' in docs[1]!.font('one')._font.layoutCache);
  // Another font file has layouts of its own.
  assert.ok(!('metastable' in docs[1]!.font('other')._font.layoutCache));
});

// The first PDF lays its words out, the second finds them laid out: the same file.
test("a figure's PDF is the same file whether its words were laid out before or not", async () => {
  const svg =
    '<svg xmlns="http://www.w3.org/2000/svg" width="200" height="40" viewBox="0 0 200 40">' +
    '<text x="4" y="16" font-size="11px">goodput 1,044 req/s</text>' +
    '<text x="4" y="32" font-size="12px" font-weight="bold">recovered after 7.5 s</text></svg>';
  const cold = await svgToPdf(svg, 8.5, 'words');
  const warm = await svgToPdf(svg, 8.5, 'words');
  assert.ok(Buffer.from(cold).equals(Buffer.from(warm)));
});
