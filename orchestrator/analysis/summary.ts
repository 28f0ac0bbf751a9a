import type { LatencySummary } from '../../bench/record/histogram.js';
import { isUsable } from './usable.js';
import type { MachineState } from '../results/machineState.js';
import type { Recorded } from '../../bench/record/Recorder.js';
import type { OutcomeKind } from '../../bench/outcome.js';
import type { ServerSeries } from '../scrape/scraper.js';
import { connectionCap, type PlannedCapacity, type RunPlan, type Span } from '../spec/plan.js';
import { describeLoad } from '../spec/loadPlan.js';
import { round } from '../../foundation/round.js';
import type { HypothesisResult } from './hypothesis.js';
import { analyzeRecovery } from './recovery.js';
import { classifyOutcome, tailOf, type Outcome, type Projection, type TrendSummary } from './outcome.js';
import type { Mechanism } from './mechanisms.js';
import { judgeDefaultFor } from './steadyState.js';
import {
  judgeValidity,
  validityLimits,
  type LatenessVerdict,
  type TriggerOutcome,
  type Validity,
} from './validity.js';
import { hasHypothesis, judgeHypotheses } from './judgeHypotheses.js';
import { omissionFactor } from './latency.js';
import { policySummary, type PolicySummary } from './policies.js';
import { phaseRates } from './rates.js';
import { runWarnings } from './runWarnings.js';
import { sustainingFigures } from './sustaining.js';
import { asTriggerOutcome, triggerWindow, type TriggerRecord } from './triggerWindow.js';
import { windowSummary, type WindowSummary } from './windows.js';
import { criterionSensitivity, type CriterionSensitivity } from './sensitivity.js';

// The run's summary, assembled from one module per question; the names other code
// imports from here are re-exported so that the split moves nothing for them.
export { bucketRange, expectedArrivals, phaseRates, serverAmplification } from './rates.js';
export { hasHypothesis, judgeHypotheses } from './judgeHypotheses.js';
export { policySummary, type PolicySummary } from './policies.js';
export { triggerWindow, type TriggerRecord } from './triggerWindow.js';
export type { WindowSummary } from './windows.js';

/** summary.json of one run: the contract every consumer reads (DESIGN.md §7). */
export interface RunSummary {
  readonly experiment: string;
  readonly runtime: string;
  readonly run: number;
  readonly seed: number;
  readonly scale: number;
  /** Usable for a verdict: complete, not interrupted, and valid (analysis/usable.ts). */
  readonly usable: boolean;
  readonly warnings: string[];
  /** Run validity (DESIGN.md §2): every check with its value and limit; no verdict without it. */
  readonly validity: Validity;
  readonly outcome: Outcome;
  /** The outcome in one sentence, with its evidence. */
  readonly outcomeReason: string;
  /** What keeps a degraded state up, as measured (metastable, not-recovered); null otherwise. */
  readonly sustainingEffect: string | null;
  /** not-recovered: the projected recovery time at the measured trend, s after the trigger. */
  readonly projectedRecoveryS: number | null;
  /** not-recovered: the projection with its 95% interval (goodput to the threshold, or the backlog to 0). */
  readonly projection?: Projection | null;
  /** Every sustaining mechanism measured over the tail: figure, threshold, met (null: not judged). */
  readonly mechanisms?: readonly Mechanism[] | null;
  /** The self-sustaining test's fit over the observation's last third (null when not needed). */
  readonly trend: TrendSummary | null;
  readonly offered: number;
  readonly recorded: number;
  readonly attempts: number;
  readonly lateSends: number;
  readonly omissionFactor: number | null;
  readonly scheduleLagMs: LatencySummary;
  /** The load model: open loop (the default) or closed loop (comparison only), and the client's connection cap. (Absent in summaries written before it existed.) */
  readonly load?: {
    readonly model: 'open' | 'closed';
    readonly description: string;
    readonly peakPerS: number | null;
    readonly connections: number;
  };
  /** Attempts that waited inside the client for a connection, and how long (only those). */
  readonly clientWait?: LatencySummary;
  readonly outcomes: Record<OutcomeKind, number>;
  /** The capacity `% capacity` used and its source (usedPerS, source, from, calibration: absent in older summaries). */
  readonly capacity: Pick<PlannedCapacity, 'nominalPerS' | 'measuredPerS'> &
    Partial<Omit<PlannedCapacity, 'nominalPerS' | 'measuredPerS'>>;
  readonly offeredPerS: number;
  readonly baseline: WindowSummary;
  /**
   * The trigger window (first actual start to the last removal of a cause); kind and
   * target join those of every trigger. `applied` is false when the run ended before the
   * first trigger: then the times are the plan's and nothing after them was measured.
   */
  readonly trigger: {
    readonly kind: string;
    readonly target: string;
    readonly startS: number;
    readonly endS: number;
    readonly applied?: boolean;
  };
  /** Each trigger as it happened, with its exact start and end (run clock, s). */
  readonly triggers: readonly {
    readonly kind: string;
    readonly target: string;
    readonly startS: number;
    readonly endS: number;
    /** A restart's time to healthy, reported on its own (never folded into the trigger or the recovery). */
    readonly restartHealthyS?: number;
    readonly error?: string;
    readonly undoError?: string;
  }[];
  readonly afterTrigger: WindowSummary;
  readonly recovered: boolean;
  readonly recoveryTimeS: number | null;
  readonly recoveryDeadlineS: number;
  readonly metastable: boolean | null;
  readonly recoveryReason: string;
  readonly observedAfterS: number;
  readonly hypothesis: HypothesisResult[];
  readonly policies: PolicySummary;
  /** The outcome under other recovery criteria (analysis/sensitivity.ts); null for an invalid run, absent in older summaries. */
  readonly sensitivity?: CriterionSensitivity | null;
  /** A lab run's machine: its load at the start and each phase's end (absent in the simulation). */
  readonly machine?: MachineState;
}

export interface SummaryInput {
  readonly plan: RunPlan;
  readonly runtime: string;
  readonly recorded: Recorded;
  readonly server: ServerSeries | null;
  /** The triggers that were applied (empty when the run stopped before the first). */
  readonly triggers: readonly TriggerRecord[];
  /** Every planned trigger as planned and as it happened (validity check 3); derived from `triggers` when absent. */
  readonly triggerOutcomes?: readonly TriggerOutcome[];
  /** The generator's own CPU per second, a share of one core; absent where not measured (the simulation). */
  readonly generatorCpu?: readonly (number | null)[];
  /** The run was stopped before its schedule ended (Ctrl-C, SIGTERM, an error). */
  readonly interrupted: boolean;
  /** Check 4's verdict on lateness: a lab run's replay (run/replay.ts), or a replay's imposed lateness. */
  readonly lateness?: LatenessVerdict;
}

export function summarizeRun(x: SummaryInput): RunSummary {
  const { plan, recorded } = x;
  const s = recorded.series;
  const bucketS = recorded.bucketMs / 1000;
  const trig = triggerWindow(plan, x.triggers);
  const applied = x.triggers.length > 0;
  const end = plan.phases.observe.endMs;
  // An interrupted run claims only the seconds it saw.
  const observedEndMs = x.interrupted ? Math.min(end, recorded.buckets * recorded.bucketMs) : end;
  const clip = (span: Span): Span => ({
    startMs: Math.min(span.startMs, observedEndMs),
    endMs: Math.min(span.endMs, observedEndMs),
  });
  const baseline = windowSummary(recorded, x.server, clip(plan.phases.baseline), 'baseline');
  const afterSpan = applied ? clip({ startMs: trig.endMs, endMs: end }) : { startMs: end, endMs: end };
  const after = windowSummary(recorded, x.server, afterSpan, 'afterTrigger');
  const goodputPerS = s.goodput.map((g) => g / bucketS);
  const recoveryInput = {
    goodput: goodputPerS,
    baselineGoodputPerS: baseline.goodputPerS,
    triggerEndS: trig.endMs / 1000,
    triggerDurationS: (trig.endMs - trig.startMs) / 1000,
    observedEndS: applied ? observedEndMs / 1000 : trig.endMs / 1000,
    windowS: plan.recovery.windowMs / 1000,
    holdS: plan.recovery.holdMs / 1000,
    tolerance: plan.recovery.tolerance,
    within: plan.recovery.within,
  };
  const recovery = analyzeRecovery(recoveryInput);

  const hypothesis = hasHypothesis(plan.experiment.hypothesis)
    ? judgeHypotheses(plan, recorded, recovery, end)
    : judgeDefaultFor(plan, recorded, x.server, recovery, end);
  const t = recorded.totals;

  const validity = judgeValidity({
    limits: validityLimits(plan.experiment),
    offered: t.offered,
    recorded: t.recorded,
    unsent: t.outcomes.unsent,
    baselineHypothesis: hypothesis.filter((h) => h.window === 'baseline'),
    triggers: x.triggerOutcomes ?? plan.triggers.map((p, i) => asTriggerOutcome(p, x.triggers[i])),
    phases: phaseRates(plan, recorded, observedEndMs),
    lagP99Ms: recorded.scheduleLag.p99,
    lagSamples: recorded.scheduleLag.samples,
    lagMaxMs: recorded.scheduleLag.max,
    ...(x.lateness ? { lateness: x.lateness } : {}),
    generatorCpu: x.generatorCpu ?? null,
  });
  const tail = tailOf(trig.endMs / 1000, observedEndMs / 1000);
  const outcomeInput = {
    validity,
    goodputPerS,
    backlog: x.server ? x.server.queueDepth : null,
    triggerEndS: trig.endMs / 1000,
    observedEndS: observedEndMs / 1000,
    sustaining: tail
      ? sustainingFigures(plan, recorded, x.server, { startMs: tail.fromS * 1000, endMs: tail.toS * 1000 })
      : null,
  };
  const verdict = classifyOutcome({ ...outcomeInput, recovery });
  const sensitivity = criterionSensitivity({ recovery: recoveryInput, outcome: outcomeInput });

  const omission = omissionFactor(recorded);
  const warnings = runWarnings({
    plan,
    recorded,
    server: x.server,
    validity,
    interrupted: x.interrupted,
    observedEndMs,
    applied,
    omissionFactor: omission,
  });

  return {
    experiment: plan.experiment.name,
    runtime: x.runtime,
    run: plan.run,
    seed: plan.seed,
    scale: plan.scale,
    usable: isUsable({
      offered: t.offered,
      recorded: t.recorded,
      unsent: t.outcomes.unsent,
      interrupted: x.interrupted,
      valid: validity.valid,
    }),
    warnings,
    validity,
    outcome: verdict.outcome,
    outcomeReason: verdict.reason,
    sustainingEffect: verdict.sustainingEffect,
    projectedRecoveryS: verdict.projectedRecoveryS,
    projection: verdict.projection,
    mechanisms: verdict.mechanisms,
    trend: verdict.trend,
    offered: t.offered,
    recorded: t.recorded,
    attempts: t.attempts,
    lateSends: t.lateSends,
    omissionFactor: omission,
    scheduleLagMs: recorded.scheduleLag,
    load: {
      model: plan.load.model,
      description: describeLoad(plan.experiment.load),
      peakPerS: plan.load.peakPerS === null ? null : round(plan.load.peakPerS, 3),
      connections: connectionCap(plan),
    },
    clientWait: recorded.clientWait,
    outcomes: t.outcomes,
    capacity: plan.capacity,
    offeredPerS: round(plan.ratePerS, 3),
    baseline,
    trigger: {
      kind: trig.kind,
      target: trig.target,
      startS: round(trig.startMs / 1000, 3),
      endS: round(trig.endMs / 1000, 3),
      applied,
    },
    triggers: x.triggers.map((t) => ({
      kind: t.kind,
      target: t.target,
      startS: round(t.startMs / 1000, 3),
      endS: round(t.endMs / 1000, 3),
      ...(t.restartHealthyMs !== undefined ? { restartHealthyS: round(t.restartHealthyMs / 1000, 3) } : {}),
      ...(t.error ? { error: t.error } : {}),
      ...(t.undoError ? { undoError: t.undoError } : {}),
    })),
    afterTrigger: after,
    recovered: verdict.outcome === 'recovered' || verdict.outcome === 'recovered-late',
    recoveryTimeS: validity.valid ? recovery.recoveryTimeS : null,
    recoveryDeadlineS: recovery.recoveryDeadlineS,
    metastable:
      verdict.outcome === 'metastable'
        ? true
        : verdict.outcome === 'invalid' || verdict.outcome === 'unmeasured'
          ? null
          : false,
    recoveryReason: verdict.reason,
    observedAfterS: applied ? recovery.observedAfterS : 0,
    hypothesis,
    policies: policySummary(recorded),
    sensitivity,
  };
}
