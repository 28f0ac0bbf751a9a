import { serveJobs } from '../../foundation/workers.js';
import { simulate } from '../../orchestrator/model/simulate.js';
import { loadExperimentFile } from '../../orchestrator/spec/load.js';
import { planRun } from '../../orchestrator/spec/plan.js';
import { describeOutcome, outcomeOf, type Outcome } from './catalogue.js';

/** One simulated run of a catalogue file at a scale and seed (sim/catalogueScale.test.ts). */
export interface CatalogueSimJob {
  readonly file: string;
  readonly scale: number;
  readonly seed: number;
}

export interface CatalogueSimResult {
  readonly outcome: Outcome;
  readonly described: string;
}

// A thread of its own per lane: the scale test's runs are independent (foundation/workers.ts).
serveJobs<CatalogueSimJob, CatalogueSimResult>(async (job, stop) => {
  const e = { ...loadExperimentFile(job.file), seed: job.seed };
  const s = (await simulate(planRun(e, { scale: job.scale, run: 1, sourceFile: job.file }), { stop }))
    .summary;
  return { outcome: outcomeOf(s), described: describeOutcome(s) };
});
