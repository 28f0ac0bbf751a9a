import { BenchError } from '../../foundation/errors.js';
import { inWorkers, SIMULATION_THREAD_LIMITS } from '../../foundation/workers.js';
import type { Experiment } from '../spec/schema.js';
import { planRun } from '../spec/plan.js';
import { dryRun } from '../spec/dryRun.js';
import type { ExperimentResult, RunOptions } from './runExperiment.js';
import { runCapacity } from './runCapacity.js';

// runExperiment is imported where a run starts: the thread that decides where a run goes
// need not load the run's code (the worker thread does).
const runExperiment = async (e: Experiment, opts: RunOptions): Promise<ExperimentResult> =>
  (await import('./runExperiment.js')).runExperiment(e, opts);

/**
 * A large simulated experiment on a worker thread of its own (`metabench run --runtime sim`,
 * `run --twin`'s twin): the thread's young generation is sized for the simulator, which the
 * main thread's cannot be once Node has started (SIMULATION_YOUNG_GENERATION_MB). Same
 * folder, same summaries: the code that runs is runExperiment's, fed the same plain options.
 *
 * A thread pays for itself only in a long run: it loads the modules again (0.6 s here) and
 * saves collection time in proportion to what the run simulates, mostly in a collapse.
 * Through the CLI, old code against new in turn (2 cores, otherwise idle, 2026-12-02):
 *   1,000 origins/s for 600 s, collapsed    28.8 s → 19.4 s on a thread
 *   the same for 250 s (250,000 origins)   12.5 s → 9.6 s
 *   250,000 origins, recovering            5.1 s → 5.7 s
 *   retry-storm.yaml (80,000, collapsed)   4.2 s → 4.8 s
 * So a run goes on a thread from THREAD_FROM_ORIGINS planned origins (all repetitions).
 */
export const THREAD_FROM_ORIGINS = 200_000;

/** Whether `e` as `opts` would run it is large enough to run on a thread (open loop; a closed loop's count is unknown: no). */
export function worthAThread(e: Experiment, opts: Omit<RunOptions, 'stop'>): boolean {
  const capacity = runCapacity(e, 'sim', opts);
  const plan = planRun(e, { scale: opts.scale, run: 1, sourceFile: opts.sourceFile, ...capacity });
  const perRun = dryRun(plan, e.repeat).expectedOrigins;
  return perRun !== null && perRun * e.repeat >= THREAD_FROM_ORIGINS;
}

/** A simulated experiment, on a thread running `worker` when worthAThread says so, else on this one. */
export function runSimulated(e: Experiment, opts: RunOptions, worker: URL): Promise<ExperimentResult> {
  return worthAThread(e, opts) ? runExperimentOnThread(e, opts, worker) : runExperiment(e, opts);
}

export interface ExperimentJob {
  readonly kind: 'experiment';
  readonly experiment: Experiment;
  readonly options: Omit<RunOptions, 'stop'>;
}

export function runExperimentJob(job: ExperimentJob, stop: AbortSignal): Promise<ExperimentResult> {
  return runExperiment(job.experiment, { ...job.options, stop });
}

/**
 * runExperiment on a thread running `worker` (which serves ExperimentJobs); its status line
 * is drawn as on this thread's stderr. The report is written here, not there: this thread
 * only waits while the other simulates, so the report's code (Vega, pdfkit: the better part
 * of a second) loads here meanwhile. The files are the same: the report is made from the
 * folder's files alone, by writeReport as on the run's thread.
 */
export async function runExperimentOnThread(
  e: Experiment,
  opts: RunOptions,
  worker: URL,
): Promise<ExperimentResult> {
  const { stop, ...options } = opts;
  // Imported here: a run on this thread, or without a report, loads none of it.
  const writer =
    options.report !== false
      ? import('../report/writeReport.js').then(async (m) => {
          await m.preloadReport();
          return m;
        })
      : undefined;
  // Awaited once the run is over; a failure to load meanwhile is not unhandled.
  writer?.catch(() => {});
  let result: ExperimentResult | undefined;
  await inWorkers(
    worker,
    [e],
    1,
    (experiment): ExperimentJob => ({
      kind: 'experiment',
      experiment,
      options: {
        ...options,
        report: false,
        statusTty: options.statusTty ?? Boolean(process.stderr.isTTY),
      },
    }),
    stop,
    (_, r: ExperimentResult) => (result = r),
    SIMULATION_THREAD_LIMITS,
  );
  if (!result) throw new BenchError('E_INTERRUPTED', 'interrupted before the run started');
  // As runExperiment would have at its end: a report when a run was made.
  if (writer && result.runs.length > 0) await (await writer).writeReport(result.dir);
  return result;
}
