import { nullSink } from '../../bench/record/eventLog.js';
import type { Recorded } from '../../bench/record/Recorder.js';
import type { RunSummary } from '../analysis/summary.js';
import { worstOriginMs } from '../run/client.js';
import { executeRun } from '../run/runOnce.js';
import { StatusLine } from '../run/status.js';
import type { ServerSeries } from '../scrape/scraper.js';
import type { RunPlan } from '../spec/plan.js';
import type { SimClock } from '../../sim/clock.js';
import { simRuntime } from '../../sim/runtime.js';
import type { SimLab } from '../../sim/SimLab.js';

export interface Simulated {
  readonly summary: RunSummary;
  readonly recorded: Recorded;
  readonly server: ServerSeries | null;
  /** The simulated lab after the run (its api's counters, its processes). */
  readonly lab: SimLab;
  readonly clock: SimClock;
  /** Wall-clock time the simulation took, ms. */
  readonly wallMs: number;
}

/**
 * Simulates one run of a plan in memory (no results folder, no event log): what
 * `metabench model`, the benchmark and the tests use. The same executeRun as
 * `metabench run --runtime sim`, so the summary is the one that command writes.
 */
export async function simulate(
  plan: RunPlan,
  opts: { readonly stop?: AbortSignal } = {},
): Promise<Simulated> {
  const rt = simRuntime(plan, { worstOriginMs: worstOriginMs(plan.experiment.client) });
  // The wall time the simulation took, for the caller's report: never part of the model.
  // eslint-disable-next-line no-restricted-properties
  const t0 = performance.now();
  const x = await executeRun(plan, rt, {
    journal: { record: () => undefined, clear: () => undefined },
    status: new StatusLine(process.stderr, true),
    stop: opts.stop ?? new AbortController().signal,
    onLabUp: () => nullSink,
  });
  if (x.failure !== undefined) throw x.failure;
  return {
    summary: x.summary!,
    recorded: x.recorded!,
    server: x.server,
    lab: rt.sim.lab,
    clock: rt.sim.clock,
    // eslint-disable-next-line no-restricted-properties
    wallMs: performance.now() - t0,
  };
}
