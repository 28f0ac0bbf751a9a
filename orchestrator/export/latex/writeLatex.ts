import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { BenchError } from '../../../foundation/errors.js';
import type { RunSummary } from '../../analysis/summary.js';
import { loadResults } from '../../report/load.js';
import { readRunManifest } from '../manifest.js';
import { figureFiles } from './figures.js';
import { methodsTex } from './methods.js';
import { experimentTables } from './tables.js';
import { tex } from './tex.js';

/**
 * `metabench export latex`: an experiment's results folder as LaTeX a thesis \input's:
 *   OUT/tables/<id>.tex, OUT/figures/<id>.pdf, OUT/figures.tex, OUT/methods.tex, OUT/main.tex
 * main.tex compiles on its own (pdflatex; booktabs, siunitx, graphicx) and sets each part on
 * its own pages: methods, tables, then the figures.
 */
export async function writeLatex(dir: string, out = join(dir, 'latex')): Promise<string[]> {
  const manifest = readRunManifest(dir);
  const results = loadResults(dir);
  if (results.sweep || results.steps)
    throw new BenchError(
      'E_USAGE',
      `${dir}: LaTeX export of sweep and calibration folders is not supported yet`,
    );
  const runs = results.runs.map((r) => ({ index: r.index, summary: readSummary(dir, r.index) }));
  const tables = experimentTables(manifest.experiment.name, runs);
  const figures = await figureFiles(results);
  const files: { path: string; content: string | Uint8Array }[] = [
    ...tables.map((t) => ({ path: `tables/${t.id}.tex`, content: t.tex })),
    ...figures.files,
    { path: 'figures.tex', content: figures.tex },
    { path: 'methods.tex', content: methodsTex(manifest, runs.length) },
    {
      path: 'main.tex',
      content: mainTex(
        manifest.experiment.name,
        tables.map((t) => t.id),
      ),
    },
  ];
  for (const f of files) {
    mkdirSync(dirname(join(out, f.path)), { recursive: true });
    writeFileSync(join(out, f.path), f.content);
  }
  return files.map((f) => join(out, f.path));
}

/** run-<i>/summary.json as written (the tables print its values, nothing recomputed). */
function readSummary(dir: string, run: number): RunSummary {
  const file = join(dir, `run-${run}`, 'summary.json');
  if (!existsSync(file)) throw new BenchError('E_USAGE', `${file}: missing`);
  return JSON.parse(readFileSync(file, 'utf8')) as RunSummary;
}

function mainTex(name: string, tables: readonly string[]): string {
  return [
    '\\documentclass[11pt,a4paper]{article}',
    '\\usepackage[utf8]{inputenc}',
    '\\usepackage[margin=2.5cm]{geometry}',
    '\\usepackage{booktabs}',
    '\\usepackage{siunitx}',
    '\\usepackage{graphicx}',
    `\\title{${tex(name)}}`,
    '\\author{metabench}',
    '\\date{}',
    '\\begin{document}',
    '\\maketitle',
    '\\section{Methods}',
    '\\input{methods}',
    '\\clearpage',
    '\\section{Results}',
    ...tables.map((t) => `\\input{tables/${t}}`),
    '\\clearpage',
    '\\input{figures}',
    '\\end{document}',
    '',
  ].join('\n');
}
