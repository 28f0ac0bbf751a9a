import type { Experiment } from '../spec/schema.js';
import { runExperiment, type RunOptions } from '../run/runExperiment.js';

/** A simulated sweep point as a worker thread's job (sweep --jobs): plain data. */
export interface PointJob {
  readonly kind: 'sweep-point';
  readonly experiment: Experiment;
  readonly options: Omit<RunOptions, 'stop' | 'lab'>;
}

/** The point, as a serial sweep runs it: its folder is the same, byte for byte but the manifest's times. */
export async function runPointJob(job: PointJob, stop: AbortSignal): Promise<null> {
  await runExperiment(job.experiment, { ...job.options, stop });
  return null;
}
