import type { Recorded } from '../../bench/record/Recorder.js';
import type { ServerSeries } from '../scrape/scraper.js';
import { connectionCap, type RunPlan } from '../spec/plan.js';
import { round } from '../../foundation/round.js';
import { hasHypothesis } from './judgeHypotheses.js';
import { describeFailed, lateWarning, type Validity } from './validity.js';

export interface WarningsInput {
  readonly plan: RunPlan;
  readonly recorded: Recorded;
  readonly server: ServerSeries | null;
  readonly validity: Validity;
  readonly interrupted: boolean;
  readonly observedEndMs: number;
  /** Whether any trigger was applied. */
  readonly applied: boolean;
  readonly omissionFactor: number | null;
}

/** What the reader of a run must be told before trusting its figures, in a fixed order. */
export function runWarnings(x: WarningsInput): string[] {
  const { plan, recorded, validity } = x;
  const t = recorded.totals;
  const warnings: string[] = [];
  for (const f of describeFailed(validity)) warnings.push(`invalid run: ${f}`);
  if (t.offered !== t.recorded)
    warnings.push(
      `offered (${t.offered}) != recorded (${t.recorded}): some origin requests have no outcome; this run is unusable`,
    );
  if (x.interrupted)
    warnings.push(
      `the run was interrupted at ${round(x.observedEndMs / 1000, 3)} s, before its schedule ended; figures cover only the seconds observed${x.applied ? '' : ', and no trigger was reached'}`,
    );
  const late = lateWarning(validity, { ...t, lagP99Ms: recorded.scheduleLag.p99 });
  if (late) warnings.push(late);
  if (!hasHypothesis(plan.experiment.hypothesis))
    warnings.push(
      'no steady-state hypothesis declared: the default one was judged (goodput >= 95% of offered, backlog and p99 not growing)',
    );
  if (x.omissionFactor !== null && x.omissionFactor > 2)
    warnings.push(
      `omission factor ${x.omissionFactor} > 2 in the baseline: response times include long waits before sending`,
    );
  if (plan.load.model === 'closed')
    warnings.push(
      'CLOSED loop: users wait for each answer before sending again, so a slow system receives less load and its response times hide the queueing (for comparison with the open loop only)',
    );
  if (recorded.clientWait.samples > 0)
    warnings.push(
      `the client's connection cap (${connectionCap(plan)}) made ${recorded.clientWait.samples} attempts wait for a connection (p99 ${recorded.clientWait.p99} ms, max ${recorded.clientWait.max} ms): the open loop turned partly closed`,
    );
  const system = plan.experiment.system;
  if (system && !system.metrics)
    warnings.push(
      'your system declares no metrics endpoint (system.metrics): the amplification is client-side only (attempts sent per origin); what the system received, its queue and its busy workers are unmeasured',
    );
  else if (system && system.metrics?.received === undefined)
    warnings.push(
      "your system's metrics map no received counter (system.metrics.received): the amplification is client-side only (attempts sent per origin)",
    );
  else if (x.server === null)
    warnings.push('no server-side metrics were scraped: server-side amplification is unmeasured');
  return warnings;
}
