import { join } from 'node:path';
import { aggregateRuns, type AggregateSummary } from '../analysis/aggregate.js';
import type { RunSummary } from '../analysis/summary.js';
import { writeReport } from '../report/writeReport.js';
import { resultsDir, writeJson } from '../results/files.js';
import { planRun } from '../spec/plan.js';
import type { Experiment } from '../spec/schema.js';
import { Journal } from '../trigger/journal.js';
import { runOnce } from './runOnce.js';
import type { Runtime } from '../lab/runtimes.js';
import { StatusLine } from './status.js';

export interface RunOptions {
  readonly scale: number;
  readonly out?: string | undefined;
  readonly resultsRoot?: string;
  readonly quiet?: boolean;
  readonly stop: AbortSignal;
  readonly manifestExtra?: Record<string, unknown>;
  /** The experiment file, for paths relative to it (a replayed trace). */
  readonly sourceFile?: string | undefined;
  /** The local lab (the default) or the simulation. */
  readonly runtime?: Runtime;
}

export interface ExperimentResult {
  readonly dir: string;
  readonly runs: RunSummary[];
  readonly aggregate: AggregateSummary | null;
}

/**
 * Runs an experiment `repeat` times and writes its results folder:
 *   DIR/run-<i>/{manifest.json, events.ndjson, timeseries.csv, summary.json, lab.log}
 *   DIR/summary.json   (the run's summary for one run; the aggregate for several)
 *   DIR/report.md, DIR/report.html, DIR/figures/, DIR/data/   (orchestrator/report/writeReport.ts)
 */
export async function runExperiment(e: Experiment, opts: RunOptions): Promise<ExperimentResult> {
  const dir = resultsDir(e.name, opts.out, opts.resultsRoot);
  const status = new StatusLine(process.stderr, opts.quiet ?? false);
  const journal = new Journal();
  const runs: RunSummary[] = [];
  status.say(`metabench: ${e.name} → ${dir}`);
  for (let i = 1; i <= e.repeat && !opts.stop.aborted; i++) {
    const plan = planRun(e, { scale: opts.scale, run: i, sourceFile: opts.sourceFile });
    const summary = await runOnce(plan, join(dir, `run-${i}`), {
      journal,
      status,
      stop: opts.stop,
      ...(opts.manifestExtra ? { manifestExtra: opts.manifestExtra } : {}),
      ...(opts.runtime ? { runtime: opts.runtime } : {}),
    });
    runs.push(summary);
    status.say(
      `  run ${i}: goodput ${summary.baseline.goodputPerS ?? '–'}/s → ${summary.afterTrigger.goodputPerS ?? '–'}/s after the trigger, ` +
        `amplification ${summary.afterTrigger.amplification ?? '–'}; ` +
        `${summary.metastable === null ? 'verdict unmeasured' : summary.metastable ? 'METASTABLE' : 'recovered'} (${summary.recoveryReason})`,
    );
  }
  const aggregate = runs.length > 1 ? aggregateRuns(runs) : null;
  if (runs.length > 0) writeJson(join(dir, 'summary.json'), aggregate ?? runs[0]);
  // The report is made from the files just written, by the same code as `metabench report`.
  if (runs.length > 0) await writeReport(dir);
  return { dir, runs, aggregate };
}
