import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { BenchError } from '../../../foundation/errors.js';
import type { RunSummary } from '../../analysis/summary.js';
import { loadResults } from '../../report/load.js';
import { readRunManifest } from '../manifest.js';
import { calibrationMethodsTex, calibrationTables, readCalibrationFolder } from './calibration.js';
import { figureFiles, figureFilesOf } from './figures.js';
import { calibrationFigures, isCalibrationDir, loadCalibration } from '../../report/calibration.js';
import { methodsTex } from './methods.js';
import { isSweepTable } from '../../report/tables.js';
import { policiesTable } from './policies.js';
import { readSweepPlan, sweepMethodsTex, sweepTables } from './sweep.js';
import { experimentTables, type TexTable } from './tables.js';
import { tex } from './tex.js';
import { MAIN_TEX_PACKAGES } from './texPackages.js';
import { sensitivityParagraph, sensitivityTables } from './sensitivity.js';
import { outcomeParagraph } from './outcome.js';

/**
 * `metabench export latex`: an experiment's, sweep's or calibration's results folder as LaTeX a thesis \input's:
 *   OUT/tables/<id>.tex, OUT/figures/<id>.pdf, OUT/figures.tex, OUT/methods.tex, OUT/main.tex
 * main.tex compiles on its own (pdflatex and the packages of texPackages.ts) and sets each part on
 * its own pages: methods, tables, then the figures.
 */
export async function writeLatex(dir: string, out = join(dir, 'latex')): Promise<string[]> {
  const calibration = isCalibrationDir(dir);
  const parts = calibration
    ? calibrationParts(dir)
    : !existsSync(join(dir, 'run-1')) && existsSync(join(dir, 'sweep-plan.json'))
      ? sweepParts(dir)
      : experimentParts(dir);
  // A sweep folder's report draws its first finished point and the sweep's own figures; a
  // calibration folder's, the step test's.
  const figures = calibration
    ? await figureFilesOf(calibrationFigures(loadCalibration(dir)))
    : await figureFiles(loadResults(dir));
  const files: { path: string; content: string | Uint8Array }[] = [
    ...parts.tables.map((t) => ({ path: `tables/${t.id}.tex`, content: t.tex })),
    ...figures.files,
    { path: 'figures.tex', content: figures.tex },
    { path: 'methods.tex', content: parts.methods },
    {
      path: 'main.tex',
      content: mainTex(
        parts.name,
        parts.tables.map((t) => t.id),
      ),
    },
  ];
  for (const f of files) {
    mkdirSync(dirname(join(out, f.path)), { recursive: true });
    writeFileSync(join(out, f.path), f.content);
  }
  return files.map((f) => join(out, f.path));
}

interface Parts {
  readonly name: string;
  readonly tables: readonly TexTable[];
  readonly methods: string;
}

function experimentParts(dir: string): Parts {
  const manifest = readRunManifest(dir);
  const results = loadResults(dir);
  if (results.sweep || results.steps)
    throw new BenchError(
      'E_USAGE',
      `${dir}: holds runs and a sweep or step table: not one experiment's results`,
    );
  const runs = results.runs.map((r) => ({ index: r.index, summary: readSummary(dir, r.index) }));
  return {
    name: manifest.experiment.name,
    tables: [
      ...experimentTables(manifest.experiment.name, runs),
      policiesTable(manifest.experiment.name, manifest.experiment, runs),
      ...sensitivityTables(manifest.experiment.name, runs),
    ],
    methods:
      methodsTex(manifest, runs.length) + outcomeParagraph(runs, results.runs) + sensitivityParagraph(runs),
  };
}

function sweepParts(dir: string): Parts {
  const plan = readSweepPlan(dir);
  const file = join(dir, 'sweep.json');
  const sweep = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as unknown) : null;
  if (!isSweepTable(sweep) || sweep.rows.length === 0)
    throw new BenchError('E_USAGE', `${file}: no finished point (or not a sweep table)`);
  return {
    name: plan.name,
    tables: sweepTables(dir, plan, sweep),
    methods: sweepMethodsTex(dir, plan, sweep),
  };
}

function calibrationParts(dir: string): Parts {
  const f = readCalibrationFolder(dir);
  const name = `${f.result.experiment}: step test`;
  return { name, tables: calibrationTables(name, f.result), methods: calibrationMethodsTex(f) };
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
    ...MAIN_TEX_PACKAGES.map((p) => `\\usepackage${p.options ? `[${p.options}]` : ''}{${p.name}}`),
    // The Results section is only tables: set each where it is written, one after another, so
    // none floats to a page of its own (a float page holding a lone table).
    '\\floatplacement{table}{H}',
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
