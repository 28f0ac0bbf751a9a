import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BenchError, SpecError } from '../../foundation/errors.js';
import type { Override } from '../../foundation/overrides.js';
import { aggregateRuns } from '../analysis/aggregate.js';
import { analyseRun, type RunRecord } from '../analysis/analyseRun.js';
import { hasHypothesis, type RunSummary } from '../analysis/summary.js';
import { resultsDir } from '../results/files.js';
import { hasRunRecord, readRunRecord, writeRunRecord } from '../results/record.js';
import { replanForAnalysis } from '../spec/analysisOverrides.js';
import { TWIN_DIR } from './load.js';

/** How a re-analysis is recorded in each run's manifest.json (and said in the report). */
export interface Reanalysis {
  /** The results folder whose records were analysed again. */
  readonly of: string;
  /** The overrides, as written on the command line (path=value). */
  readonly overrides: readonly string[];
}

/** The run folders (run-<i>) of an experiment folder, in run order. */
export function runFolders(dir: string): { name: string; index: number }[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .map((name) => /^run-(\d+)$/.exec(name))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ name: m[0], index: Number(m[1]) }))
    .sort((a, b) => a.index - b.index);
}

/** The points of a sweep folder (point-<k>/, each an experiment folder), in order; empty for any other folder. */
export function sweepPoints(dir: string): string[] {
  if (!existsSync(join(dir, 'sweep.json')) || runFolders(dir).length > 0) return [];
  return readdirSync(dir)
    .map((name) => /^point-(\d+)$/.exec(name))
    .filter((m): m is RegExpExecArray => m !== null)
    .sort((a, b) => Number(a[1]) - Number(b[1]))
    .map((m) => m[0]);
}

/** The first run of an experiment folder that kept no record (run-<i>/record.json.gz), or null. */
export function unrecordedRun(dir: string): string | null {
  const r = runFolders(dir).find((x) => !hasRunRecord(join(dir, x.name)));
  return r ? join(dir, r.name) : null;
}

/** Whether every run of the experiment folder kept a record (so it can be analysed again). */
export function isRecorded(dir: string): boolean {
  const runs = runFolders(dir);
  return runs.length > 0 && runs.every((r) => hasRunRecord(join(dir, r.name)));
}

/** Where `report DIR --set …` writes when no --out is given: beside the runs, named by the overrides. */
export function reanalysisDir(dir: string, overrides: readonly Override[]): string {
  const hash = createHash('sha256')
    .update(overrides.map((o) => o.source).join('\n'))
    .digest('hex')
    .slice(0, 8);
  return join(dir, `reanalysis-${hash}`);
}

/** One run analysed again, not yet written. */
interface RunAgain {
  readonly name: string;
  readonly from: string;
  readonly record: RunRecord;
  readonly summary: RunSummary;
}

/** An experiment folder analysed again from its records, ready to be written (write). */
export interface Reanalysed {
  readonly src: string;
  readonly overrides: readonly Override[];
  readonly runs: readonly RunAgain[];
  /** The aggregate (several runs) or the one run's summary: the folder's summary.json. */
  readonly top: unknown;
  readonly twin: Reanalysed | null;
}

/**
 * Every run of the experiment folder `src` analysed again from its record, with the
 * overrides applied to its plan (spec/analysisOverrides.ts), then the aggregate, and the
 * simulated twin's likewise. Nothing is written: a bad override is refused before any
 * folder is made.
 */
export function reanalyse(src: string, overrides: readonly Override[]): Reanalysed {
  if (!isRecorded(src))
    throw new BenchError(
      'E_USAGE',
      `${src}: not every run kept a record (run-<i>/record.json.gz), so it cannot be analysed again`,
      'a folder written before records existed can be re-rendered (metabench report DIR) but not re-analysed',
    );
  const runs = runFolders(src).map((r): RunAgain => {
    const from = join(src, r.name);
    const record = readRunRecord(from);
    const manifestFile = join(from, 'manifest.json');
    const plan = replanForAnalysis(record.plan, overrides, manifestFile);
    if (overrides.length > 0 && !record.recorded.successes && hasHypothesis(plan.experiment.hypothesis))
      throw new SpecError([
        {
          file: manifestFile,
          path: 'hypothesis',
          message:
            'this run declared no hypothesis, so it kept no success log and its record cannot judge thresholds; run the experiment again with them',
        },
      ]);
    const again = { ...record, plan };
    return { name: r.name, from, record: again, summary: analyseRun(again) };
  });
  const summaries = runs.map((r) => r.summary);
  const twinDir = join(src, TWIN_DIR);
  return {
    src,
    overrides,
    runs,
    top: summaries.length > 1 ? aggregateRuns(summaries) : summaries[0],
    twin: isRecorded(twinDir) ? reanalyse(twinDir, overrides) : null,
  };
}

/**
 * Writes a re-analysis into `dst`: per run, its manifest (with the re-analysis recorded),
 * its timeseries.csv, its record (with the plan it was judged by) and the new
 * summary.json; then the folder's summary.json, and the twin's in dst/twin. The new
 * folder renders, and re-analyses, on its own; the report is the caller's (writeReport).
 */
export function writeReanalysis(r: Reanalysed, dst: string): void {
  const reanalysis: Reanalysis = {
    of: r.src,
    overrides: r.overrides.map((o) => o.source.replace(/^--set /, '')),
  };
  mkdirSync(dst, { recursive: true });
  for (const run of r.runs) {
    const to = join(dst, run.name);
    mkdirSync(to, { recursive: true });
    const manifest = JSON.parse(readFileSync(join(run.from, 'manifest.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    const planFields = manifest['plan'] as Record<string, unknown> | undefined;
    const plan = run.record.plan;
    writeFileSync(
      join(to, 'manifest.json'),
      json({
        ...manifest,
        ...(planFields ? { plan: { ...planFields, recovery: plan.recovery } } : {}),
        experiment: plan.experiment,
        reanalysis,
      }),
    );
    for (const f of ['timeseries.csv', 'lab.log'])
      if (existsSync(join(run.from, f))) copyFileSync(join(run.from, f), join(to, f));
    writeRunRecord(to, run.record);
    writeFileSync(join(to, 'summary.json'), json(run.summary));
  }
  writeFileSync(join(dst, 'summary.json'), json(r.top));
  if (r.twin) writeReanalysis(r.twin, join(dst, TWIN_DIR));
}

/**
 * Rewrites the summaries of the folder a re-analysis with no override read, where they
 * differ (only when the analysis changed since the run: `note` says which); returns the
 * files rewritten.
 */
export function rewriteInPlace(r: Reanalysed, note: (line: string) => void): string[] {
  const changed: string[] = [];
  const put = (file: string, text: string): void => {
    if (existsSync(file) && readFileSync(file, 'utf8') === text) return;
    note(
      `metabench: ${file} recomputed from the record differs from the one written at run time (the analysis changed since): rewritten`,
    );
    writeFileSync(file, text);
    changed.push(file);
  };
  for (const run of r.runs) put(join(run.from, 'summary.json'), json(run.summary));
  put(join(r.src, 'summary.json'), json(r.top));
  if (r.twin) changed.push(...rewriteInPlace(r.twin, note));
  return changed;
}

/**
 * The folder a re-analysis with `overrides` goes to: `out`, else DIR/reanalysis-<hash of
 * the overrides>; never one that already holds results.
 */
export function reanalysisTarget(dir: string, overrides: readonly Override[], out?: string): string {
  const target = out ?? reanalysisDir(dir, overrides);
  if (!out && existsSync(join(target, 'summary.json')))
    throw new BenchError(
      'E_USAGE',
      `${target} already holds this re-analysis (the same overrides); results are never overwritten`,
      'give --out another folder',
    );
  return resultsDir('reanalysis', target);
}

/** summary.json's text, as runs write it (results/files.ts writeJson). */
function json(x: unknown): string {
  return JSON.stringify(x, null, 2) + '\n';
}
