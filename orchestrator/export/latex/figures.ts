import type { ResultsData } from '../../report/load.js';
import { allFigures, reportFigures, svgFiles } from '../../report/writeReport.js';
import type { OutFile } from '../../report/exports.js';
import type { Figure } from '../../report/figures/common.js';
import { tex } from './tex.js';

/**
 * The report's figures as vector PDF at the text width (the report's own rendering,
 * report/pdf.ts), and figures.tex: one figure environment each, its caption the report's
 * title and sentence, labelled fig:<id>.
 */
export async function figureFiles(x: ResultsData): Promise<{ files: OutFile[]; tex: string; ids: string[] }> {
  return figureFilesOf(allFigures(reportFigures(x)));
}

/** The given report figures as PDF, with their figures.tex. */
export async function figureFilesOf(
  figures: readonly Figure[],
): Promise<{ files: OutFile[]; tex: string; ids: string[] }> {
  const rendered = await svgFiles(figures, undefined, { pdf: 'text' });
  const files = rendered.filter((f) => f.path.endsWith('.pdf'));
  const body = figures.map((f) =>
    [
      '\\begin{figure}[p]',
      '\\centering',
      // A tall figure (the sweep's, a panel per figure) shrinks to keep two a page.
      `\\includegraphics[width=\\linewidth,height=0.4\\textheight,keepaspectratio]{figures/${f.id}.pdf}`,
      `\\caption[${tex(f.title)}]{${tex(f.title)}. ${tex(f.caption)}}`,
      `\\label{fig:${f.id}}`,
      '\\end{figure}',
      '',
    ].join('\n'),
  );
  return { files, tex: body.join('\n'), ids: figures.map((f) => f.id) };
}
