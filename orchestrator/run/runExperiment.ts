import { join } from 'node:path';
import { aggregateRuns, type AggregateSummary } from '../analysis/aggregate.js';
import type { RunSummary } from '../analysis/summary.js';
import { resultsDir, writeJson } from '../results/files.js';
import { runLabel } from '../results/naming.js';
import { appendIndex } from '../results/runIndex.js';
import { indexOutcome } from './indexOutcome.js';
import { describeCapacity, planRun, usesCapacityFraction, type PlannedCapacity } from '../spec/plan.js';
import type { Experiment } from '../spec/schema.js';
import { Journal } from '../trigger/journal.js';
import type { CapacityMode } from '../calibrate/capacity.js';
import { runCapacity } from './runCapacity.js';
import { DEFAULT_RUNTIME, type Runtime } from '../lab/runtimes.js';
import { refuseOn, runtimePlugin } from '../lab/RuntimePlugin.js';
import { runOnce, type RunContext } from './runOnce.js';
import { StatusLine } from './status.js';
import { replayLateness } from './replay.js';
import type { EventsMode } from '../../bench/record/eventLog.js';

export interface RunOptions {
  readonly scale: number;
  readonly out?: string | undefined;
  readonly resultsRoot?: string;
  readonly quiet?: boolean;
  readonly stop: AbortSignal;
  readonly manifestExtra?: Record<string, unknown>;
  /** The experiment file, for paths relative to it (a replayed trace). */
  readonly sourceFile?: string | undefined;
  /** The lab's runtime (default: local). */
  readonly runtime?: Runtime | undefined;
  /** The docker runtime's compose project, the local one's CPU pinning, the generator's priority and the run's observers (live /metrics, Grafana annotations). */
  readonly lab?: Pick<RunContext, 'docker' | 'observe' | 'pin' | 'priority'>;
  /** Which capacity `% capacity` uses (default auto: the measured one when this lab was calibrated on this machine). */
  readonly capacity?: CapacityMode | undefined;
  /**
   * The capacity to use as it is, not resolved again: a simulated twin takes the one its
   * lab run recorded (twinCapacity), so it offers the rate the lab ran. Overrides `capacity`.
   */
  readonly planned?: PlannedCapacity | undefined;
  /** Which events each run writes to its event log (default all). */
  readonly events?: EventsMode | undefined;
  /** Draw the status line as on a terminal (or not) whatever stderr is: a worker thread's stderr is a pipe to its parent's. */
  readonly statusTty?: boolean | undefined;
  /** The command line's --set overrides as written: their short hash names the results folder. */
  readonly overrides?: readonly string[] | undefined;
  /** Write the report (report.md, report.html, figures/, data/) at the end (default true); summaries and records are written either way. */
  readonly report?: boolean | undefined;
}

export interface ExperimentResult {
  readonly dir: string;
  readonly runs: RunSummary[];
  readonly aggregate: AggregateSummary | null;
}

/**
 * Runs an experiment `repeat` times and writes its results folder:
 *   DIR/run-<i>/{manifest.json, events.ndjson.gz, timeseries.csv, summary.json, lab.log}
 *   DIR/summary.json   (the run's summary for one run; the aggregate for several)
 *   DIR/report.md, DIR/report.html, DIR/figures/, DIR/data/   (orchestrator/report/writeReport.ts; not with report: false)
 */
export async function runExperiment(e: Experiment, opts: RunOptions): Promise<ExperimentResult> {
  const runtime = opts.runtime ?? DEFAULT_RUNTIME;
  // Before any folder is made: --capacity measured without a calibration stops here.
  const capacity = runCapacity(e, runtime, opts);
  // … and so does an experiment the runtime cannot run as declared (the simulation: an LLM lab, a toxic it does not model).
  refuseOn(runtimePlugin(runtime), e, opts.sourceFile);
  const dir = resultsDir(
    `${e.name}-${runLabel({ runtime, scale: opts.scale, overrides: opts.overrides })}`,
    opts.out,
    opts.resultsRoot,
  );
  const runs: RunSummary[] = [];
  // results/index gets a line however the run ends: finished, interrupted, or failed.
  const index = (failed: boolean): void => {
    appendIndex(
      dir,
      {
        kind: 'run',
        file: opts.sourceFile ?? '(bundle)',
        runtime,
        scale: opts.scale,
        ...indexOutcome(runs, { interrupted: opts.stop.aborted, failed }),
      },
      opts.resultsRoot,
    );
  };
  let aggregate: AggregateSummary | null;
  try {
    aggregate = await runAll(e, opts, runtime, capacity, dir, runs);
  } catch (err) {
    index(true);
    throw err;
  }
  index(false);
  return { dir, runs, aggregate };
}

/** The journal of a run whose faults nothing could outlive. */
const NO_JOURNAL: Pick<Journal, 'record' | 'clear'> = { record: () => {}, clear: () => {} };

/** The runs, then the summary and the report, into `dir`; each run's summary pushed onto `runs`. */
async function runAll(
  e: Experiment,
  opts: RunOptions,
  runtime: Runtime,
  capacity: ReturnType<typeof runCapacity>,
  dir: string,
  runs: RunSummary[],
): Promise<AggregateSummary | null> {
  const status = new StatusLine(
    opts.statusTty === undefined
      ? process.stderr
      : { write: (text: string) => process.stderr.write(text), isTTY: opts.statusTty },
    opts.quiet ?? false,
  );
  // A simulation's faults are virtual (its recipes are all 'none', host triggers are refused):
  // nothing outlives the process, so none is written and fsynced to the on-disk journal.
  const journal: Pick<Journal, 'record' | 'clear'> = runtimePlugin(runtime).capabilities.virtualTime
    ? NO_JOURNAL
    : new Journal();
  const first = planRun(e, { scale: opts.scale, run: 1, sourceFile: opts.sourceFile, ...capacity }).capacity;
  status.say(`metabench: ${e.name} → ${dir}`);
  // Which capacity `% capacity` used, and where it came from (also in manifest.json and summary.json).
  status.say(`  ${describeCapacity(first, usesCapacityFraction(e))}`);
  for (let i = 1; i <= e.repeat && !opts.stop.aborted; i++) {
    const plan = planRun(e, { scale: opts.scale, run: i, sourceFile: opts.sourceFile, ...capacity });
    const summary = await runOnce(plan, join(dir, `run-${i}`), {
      journal,
      status,
      stop: opts.stop,
      runtime,
      ...(opts.events ? { events: opts.events } : {}),
      ...opts.lab,
      ...(opts.manifestExtra ? { manifestExtra: opts.manifestExtra } : {}),
      // A lab run's lateness is replayed in the simulation (validity check 4).
      ...(!runtimePlugin(runtime).capabilities.virtualTime
        ? {
            judgeLateness: (lags: Float32Array) =>
              replayLateness(plan, join(dir, `run-${i}`), lags, { journal, status, stop: opts.stop }),
          }
        : {}),
    });
    runs.push(summary);
    // The outcome first (DESIGN.md §2), then the figures it rests on; nothing after a trigger never reached.
    status.say(
      `  run ${i}: ${summary.outcome.toUpperCase()}: ${summary.outcomeReason}; ` +
        (summary.trigger.applied === false
          ? `goodput ${summary.baseline.goodputPerS ?? '–'}/s in the baseline; the run ended before the trigger`
          : `goodput ${summary.baseline.goodputPerS ?? '–'}/s → ${summary.afterTrigger.goodputPerS ?? '–'}/s after the trigger, ` +
            `amplification ${summary.afterTrigger.amplification ?? '–'}`),
    );
  }
  const aggregate = runs.length > 1 ? aggregateRuns(runs) : null;
  if (runs.length > 0) writeJson(join(dir, 'summary.json'), aggregate ?? runs[0]);
  // The report is made from the files just written, by the same code as `metabench report`
  // (imported here: its figure libraries are loaded only by a run that draws them).
  if (runs.length > 0 && opts.report !== false)
    await (await import('../report/writeReport.js')).writeReport(dir);
  return aggregate;
}
