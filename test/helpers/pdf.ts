import { readFileSync } from 'node:fs';

/** Each page's text of a PDF file, as pdf.js extracts it (items joined by spaces). */
export async function readPdfPages(file: string): Promise<string[]> {
  const pdfjs = await import('pdfjs-dist/legacy/build/pdf.mjs');
  const doc = await pdfjs.getDocument({
    data: new Uint8Array(readFileSync(file)),
    disableFontFace: true,
    verbosity: 0,
  }).promise;
  const pages: string[] = [];
  for (let i = 1; i <= doc.numPages; i++)
    pages.push(
      (await (await doc.getPage(i)).getTextContent()).items.map((x) => ('str' in x ? x.str : '')).join(' '),
    );
  return pages;
}
