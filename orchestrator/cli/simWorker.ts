import { serveJobs } from '../../foundation/workers.js';
import type { MapCellJob } from '../model/map.js';
import type { PointJob } from '../sweep/pointWorker.js';
import { runExperimentJob, type ExperimentJob } from '../run/onThread.js';
import { registerRuntime } from '../lab/RuntimePlugin.js';
import { simPlugin } from '../../sim/runtime.js';
// The run's code, loaded before any job: a stop soon after a run's job arrives must find the
// run started, not its modules still loading (simThread.test).
import '../run/runExperiment.js';

// A worker thread of simulated jobs (sweep --jobs, model --jobs, run --runtime sim): the
// simulation's runtime, then each job it is sent. Only the simulation's: every job here is
// simulated, and the labs' runtimes (their HTTP clients, Docker, Postgres drivers) took a
// third of a second to load on every thread for nothing. The sweep's and the model's
// code is loaded by their first job: a run's thread need not load them.
registerRuntime(simPlugin);
serveJobs<PointJob | MapCellJob | ExperimentJob, unknown>(async (job, stop) =>
  job.kind === 'sweep-point'
    ? (await import('../sweep/pointWorker.js')).runPointJob(job, stop)
    : job.kind === 'experiment'
      ? runExperimentJob(job, stop)
      : (await import('../model/map.js')).runMapCell(job),
);
