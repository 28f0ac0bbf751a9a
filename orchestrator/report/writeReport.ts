import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { calibrationReportFiles, clearDerived, isCalibrationDir, loadCalibration } from './calibration.js';
import { dataFiles, type OutFile } from './exports.js';
import type { Figure } from './figures/common.js';
import { repetitionFigures } from './figures/repetitions.js';
import { runFigures } from './figures/run.js';
import { stepFigures } from './figures/step.js';
import { sweepFigures } from './figures/sweep.js';
import { renderHtml } from './html.js';
import { loadResults, type ResultsData } from './load.js';
import { renderMarkdown, reportSections, reportTitle, type ReportFigures } from './markdown.js';
import { loadVega, renderSvg } from './svg.js';
import { loadPdfkit, PDF_WIDTHS, printFigure, svgToPdf, type PdfWidth } from './pdf.js';
import { textWidth } from './textWidth.js';
import { isValid } from '../analysis/tally.js';

/**
 * Every figure of a results folder, by where it goes in the report. Figures across
 * repetitions draw the valid runs only (DESIGN.md §2); each run keeps its own figures.
 */
export function reportFigures(x: ResultsData): ReportFigures {
  const many = x.runs.length > 1;
  return {
    runs: [
      ...repetitionFigures(x.runs.filter((r) => isValid(r.summary))),
      ...x.runs.flatMap((r) => runFigures(r, many ? `run-${r.index}-` : '')),
    ],
    sweep: x.sweep ? sweepFigures(x.sweep) : [],
    steps: x.steps ? stepFigures(x.steps) : [],
  };
}

export function allFigures(f: ReportFigures): Figure[] {
  return [...f.runs, ...f.sweep, ...f.steps];
}

export interface ReportOptions {
  /** The width of each figure's PDF (figures/<id>.pdf): one column (8.5 cm), the text width (16 cm), or no PDF. */
  readonly pdf?: PdfWidth | 'none';
}

/**
 * Renders the figures to SVG, and each SVG to a vector PDF beside it (figures/<id>.pdf,
 * for LaTeX) unless `pdf` is none. What Vega warns about goes to `warn` (stderr): a
 * figure that may print wrong is said so, and the rest of the report is still written.
 */
export async function svgFiles(
  figures: readonly Figure[],
  warn: (line: string) => void = (l) => process.stderr.write(`${l}\n`),
  opts: ReportOptions = {},
): Promise<OutFile[]> {
  const out: OutFile[] = [];
  const pdf = opts.pdf ?? 'column';
  for (const f of figures) {
    const { svg, warnings } = await renderSvg(f.spec);
    for (const w of warnings) warn(`metabench: figure ${f.id}: ${w}`);
    out.push({ path: `figures/${f.id}.svg`, content: svg });
    if (pdf !== 'none')
      out.push({
        path: `figures/${f.id}.pdf`,
        content: await svgToPdf((await printFigure(f.spec, pdf)).svg, PDF_WIDTHS[pdf], f.title),
      });
  }
  return out;
}

/** Every file of a report made from loaded results. */
export async function reportFiles(x: ResultsData, opts: ReportOptions = {}): Promise<OutFile[]> {
  const figs = reportFigures(x);
  const all = allFigures(figs);
  return [
    { path: 'report.md', content: renderMarkdown(x, figs) },
    { path: 'report.html', content: renderHtml(reportTitle(x), reportSections(x, figs)) },
    ...(await svgFiles(all, undefined, opts)),
    ...dataFiles(x, all),
  ];
}

/**
 * Loads what drawing the figures needs (Vega and Vega-Lite, pdfkit and svg-to-pdfkit, the
 * figures' font): about half a second, paid on a thread with nothing else to do (a run's,
 * while its simulation runs on another) instead of when the first figure is drawn.
 */
export async function preloadReport(): Promise<void> {
  textWidth('0', 1);
  await Promise.all([loadVega(), loadPdfkit()]);
}

export function writeFiles(dir: string, files: readonly OutFile[]): void {
  for (const f of files) {
    mkdirSync(dirname(join(dir, f.path)), { recursive: true });
    writeFileSync(join(dir, f.path), f.content);
  }
}

/**
 * (Re)writes the report of a results folder from its files alone: report.md,
 * report.html, figures/ and data/. The end of `metabench run` and `metabench report`
 * both come here, so a folder copied elsewhere renders the same report.
 */
export async function writeReport(dir: string, opts: ReportOptions = {}): Promise<string[]> {
  // A calibration folder (metabench calibrate) has a report of its own: the step test.
  const files = isCalibrationDir(dir)
    ? await calibrationReportFiles(loadCalibration(dir), (f) => svgFiles(f, undefined, opts))
    : await reportFiles(loadResults(dir), opts);
  // figures/ and data/ are derived: clear them so no figure of an older rendering lingers.
  clearDerived(dir);
  writeFiles(dir, files);
  return files.map((f) => f.path);
}
