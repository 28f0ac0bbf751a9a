import { serveJobs } from '../../foundation/workers.js';
import { runMapCell, type MapCellJob } from '../model/map.js';
import { runPointJob, type PointJob } from '../sweep/pointWorker.js';
import { runExperimentJob, type ExperimentJob } from '../run/onThread.js';
import { registerRuntimes } from './runtimes.js';

// A worker thread of simulated jobs (sweep --jobs, model --jobs, run --runtime sim): the
// runtimes as the CLI registers them, then each job it is sent.
registerRuntimes();
serveJobs<PointJob | MapCellJob | ExperimentJob, unknown>((job, stop) =>
  job.kind === 'sweep-point'
    ? runPointJob(job, stop)
    : job.kind === 'experiment'
      ? runExperimentJob(job, stop)
      : runMapCell(job),
);
