import { BenchError } from '../../foundation/errors.js';
import { inWorkers, SIMULATION_YOUNG_GENERATION_MB } from '../../foundation/workers.js';
import type { Experiment } from '../spec/schema.js';
import { runExperiment, type ExperimentResult, type RunOptions } from './runExperiment.js';

/**
 * A simulated experiment on a worker thread of its own (`metabench run --runtime sim`, a
 * twin): the thread's young generation is sized for the simulator, which the main thread's
 * cannot be once Node has started (SIMULATION_YOUNG_GENERATION_MB: a 600 s collapse ran
 * in 14.9 s against 28.7 s in this thread, on one core). Same folder, same summaries: the
 * code that runs is runExperiment's, fed the same plain options.
 */
export interface ExperimentJob {
  readonly kind: 'experiment';
  readonly experiment: Experiment;
  readonly options: Omit<RunOptions, 'stop'>;
}

export function runExperimentJob(job: ExperimentJob, stop: AbortSignal): Promise<ExperimentResult> {
  return runExperiment(job.experiment, { ...job.options, stop });
}

/** runExperiment on a thread running `worker` (which serves ExperimentJobs); its status line is drawn as on this thread's stderr. */
export async function runExperimentOnThread(
  e: Experiment,
  opts: RunOptions,
  worker: URL,
): Promise<ExperimentResult> {
  const { stop, ...options } = opts;
  let result: ExperimentResult | undefined;
  await inWorkers(
    worker,
    [e],
    1,
    (experiment): ExperimentJob => ({
      kind: 'experiment',
      experiment,
      options: { ...options, statusTty: options.statusTty ?? Boolean(process.stderr.isTTY) },
    }),
    stop,
    (_, r: ExperimentResult) => (result = r),
    { maxYoungGenerationSizeMb: SIMULATION_YOUNG_GENERATION_MB },
  );
  if (!result) throw new BenchError('E_INTERRUPTED', 'interrupted before the run started');
  return result;
}
