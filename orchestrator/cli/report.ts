import { InvalidArgumentError, type Command } from 'commander';
import { join } from 'node:path';
import { BenchError } from '../../foundation/errors.js';
import { isCalibrationDir } from '../report/calibration.js';
import { PDF_WIDTHS, type PdfWidth } from '../report/pdf.js';
import {
  isRecorded,
  reanalyse,
  reanalysisTarget,
  rewriteInPlace,
  runFolders,
  sweepPoints,
  unrecordedRun,
  writeReanalysis,
} from '../report/reanalyse.js';
import { RECORD_FILE } from '../results/record.js';
import { writeReport } from '../report/writeReport.js';
import { analysisOverrides } from '../spec/analysisOverrides.js';

/**
 * Refuses, before anything is read or written, a folder `--set`/`--out` cannot re-analyse:
 * a sweep (its table would need the sweep file again: each point is re-analysed on its
 * own), a calibration, a folder without runs, or runs that kept no record.
 */
function refuseUnreanalysable(dir: string, points: readonly string[]): void {
  if (points.length > 0)
    throw new BenchError(
      'E_USAGE',
      `${dir}: a sweep's folder: --set and --out re-analyse one experiment folder, and a sweep's table (sweep.json) is not made again from its points`,
      `re-analyse each point on its own, e.g. metabench report ${join(dir, points[0]!)} --set … (points: ${points.join(', ')})`,
    );
  if (isCalibrationDir(dir))
    throw new BenchError(
      'E_USAGE',
      `${dir}: a calibration's folder: --set and --out re-analyse the runs of an experiment folder`,
    );
  if (runFolders(dir).length === 0)
    throw new BenchError(
      'E_USAGE',
      `${dir}: no run-<i>/ folder: --set and --out re-analyse the runs of an experiment folder (run-<i>/ with their record.json.gz)`,
      'give the folder `metabench run` wrote (a sweep point is one: DIR/point-<k>)',
    );
  const bare = unrecordedRun(dir);
  if (bare !== null)
    throw new BenchError(
      'E_USAGE',
      `${join(bare, RECORD_FILE)}: missing: this run was recorded by a metabench that kept no record, so it cannot be analysed again with --set`,
      'without --set, metabench report DIR still re-renders its report; run the experiment again to judge it by other criteria',
    );
}

export function register(program: Command): void {
  program
    .command('report')
    .description(
      "analyse a results folder again from its runs' records and re-render report.md, report.html, figures/ and data/ from its files alone; with --set, judge the same measurements by other criteria into a new folder",
    )
    .argument('<results-dir>', 'a folder `metabench run`, `sweep` or `calibrate` wrote')
    .option(
      '--set <path=value>',
      'judge the recorded runs with another value of an analysis field (recovery.*, validity.*, hypothesis.*), e.g. --set recovery.within=2x (repeatable); written to DIR/reanalysis-<hash>/ or --out',
      (v: string, prev: string[]) => [...prev, v],
      [] as string[],
    )
    .option('--out <dir>', 'where a re-analysis goes (default DIR/reanalysis-<hash of the overrides>)')
    .option(
      '--pdf <width>',
      `each figure also as vector PDF (figures/<id>.pdf, fonts embedded) ${Object.entries(PDF_WIDTHS)
        .map(([k, cm]) => `${k} (${cm} cm wide)`)
        .join(' | ')} | none`,
      (v: string): PdfWidth | 'none' => {
        if (v === 'none' || v in PDF_WIDTHS) return v as PdfWidth | 'none';
        throw new InvalidArgumentError(
          `--pdf takes ${Object.keys(PDF_WIDTHS).join(', ')} or none (got "${v}")`,
        );
      },
      'column',
    )
    .action(async (dir: string, o: { pdf: PdfWidth | 'none'; set: string[]; out?: string }) => {
      const note = (line: string): void => void process.stderr.write(`${line}\n`);
      let target = dir;
      const points = sweepPoints(dir);
      if (o.set.length > 0 || o.out !== undefined) {
        refuseUnreanalysable(dir, points);
        const overrides = analysisOverrides(o.set, join(dir, 'run-1', 'manifest.json'));
        // Judged first: a bad override is refused before any folder is made.
        const again = reanalyse(dir, overrides);
        target = reanalysisTarget(dir, overrides, o.out);
        writeReanalysis(again, target);
      } else if (points.length > 0) {
        // A sweep: each point's summaries recomputed from its records; its table is made from them at run time.
        const changed = points
          .map((p) => join(dir, p))
          .filter((p) => isRecorded(p))
          .flatMap((p) => rewriteInPlace(reanalyse(p, []), note));
        if (changed.length > 0)
          note(
            `metabench: ${join(dir, 'sweep.json')}, sweep.csv and sweep.md still show the verdicts of the run; the points' summaries above are this analysis's`,
          );
      } else if (!isCalibrationDir(dir) && isRecorded(dir)) {
        // No change: summary.json is recomputed from the records (byte-identical unless the analysis changed).
        rewriteInPlace(reanalyse(dir, []), note);
      }
      const files = await writeReport(target, { pdf: o.pdf });
      process.stderr.write(`metabench: wrote ${files.length} files in ${target}\n`);
      process.stdout.write(`${target}\n`);
    });
}
