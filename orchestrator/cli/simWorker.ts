import { serveJobs } from '../../foundation/workers.js';
import { runMapCell, type MapCellJob } from '../model/map.js';
import { runPointJob, type PointJob } from '../sweep/pointWorker.js';
import { runExperimentJob, type ExperimentJob } from '../run/onThread.js';
import { registerRuntime } from '../lab/RuntimePlugin.js';
import { simPlugin } from '../../sim/runtime.js';

// A worker thread of simulated jobs (sweep --jobs, model --jobs, run --runtime sim): the
// simulation's runtime, then each job it is sent. Only the simulation's: every job here is
// simulated, and the labs' runtimes (their HTTP clients, Docker, Postgres drivers) took a
// third of a second to load on every thread for nothing.
registerRuntime(simPlugin);
serveJobs<PointJob | MapCellJob | ExperimentJob, unknown>((job, stop) =>
  job.kind === 'sweep-point'
    ? runPointJob(job, stop)
    : job.kind === 'experiment'
      ? runExperimentJob(job, stop)
      : runMapCell(job),
);
