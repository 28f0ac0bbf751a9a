import { serveJobs } from '../../foundation/workers.js';
import { runMapCell, type MapCellJob } from '../model/map.js';
import { runPointJob, type PointJob } from '../sweep/pointWorker.js';
import { registerRuntimes } from './runtimes.js';

// A worker thread of simulated jobs (sweep --jobs, model --jobs): the runtimes as the CLI
// registers them, then each job it is sent.
registerRuntimes();
serveJobs((job: PointJob | MapCellJob, stop) =>
  job.kind === 'sweep-point' ? runPointJob(job, stop) : runMapCell(job),
);
