import type { LatencySummary } from '../../bench/record/histogram.js';
import type { MachineState } from '../results/machineState.js';
import type { Recorded } from '../../bench/record/Recorder.js';
import { FAILURE_KINDS, type OutcomeKind } from '../../bench/outcome.js';
import type { ServerSeries } from '../scrape/scraper.js';
import {
  connectionCap,
  type PlannedCapacity,
  type PlannedTrigger,
  type RunPlan,
  type Span,
} from '../spec/plan.js';
import { describeLoad } from '../spec/loadPlan.js';
import { HYPOTHESIS_METRICS } from '../spec/schema.js';
import { triggerTarget } from '../spec/sections/schedule.js';
import { apiReplicaCount } from '../spec/sections/lab.js';
import type { Experiment } from '../spec/schema.js';
import type { Thresholds } from '../spec/sections/hypothesis.js';
import { judge, type HypothesisResult, type HypothesisWindow, type WindowFigures } from './hypothesis.js';
import { analyzeRecovery, type RecoveryResult } from './recovery.js';
import { expectedArrivalsIn } from '../spec/arrivals/index.js';
import {
  classifyOutcome,
  tailOf,
  type Outcome,
  type SustainingFigures,
  type TrendSummary,
} from './outcome.js';
import {
  describeFailed,
  judgeValidity,
  validityLimits,
  type PhaseRate,
  type TriggerOutcome,
  type Validity,
} from './validity.js';
import { round } from '../../foundation/round.js';

/** A trigger as it actually happened (times from the run's clock). */
export interface TriggerRecord {
  readonly kind: string;
  readonly target: string;
  readonly startMs: number;
  /** When its cause was removed (DESIGN.md §2): not when a restarted process became healthy. */
  readonly endMs: number;
  readonly describe?: string;
  readonly plannedStartMs?: number;
  /** A restart's time from its start to its health check passing, ms. */
  readonly restartHealthyMs?: number;
  /** Why applying it failed (it was undone anyway). */
  readonly error?: string;
  readonly undoError?: string;
}

/**
 * Per-policy counters of a run (whole run). A counter is null when the client did not
 * use that policy, so "0 breaker opens" always means a breaker that never opened.
 */
export interface PolicySummary {
  /** Independent client instances the load was split over. */
  readonly clients: number;
  /** Retries scheduled (after a retryable failure, with maxAttempts, deadline and budget allowing). */
  readonly retries: number;
  readonly retriesDeniedByBudget: number | null;
  /** Retryable failures not retried because the next try would start past the origin's deadline. */
  readonly retriesCutByDeadline: number;
  /** Retryable failures not retried because maxAttempts was reached. */
  readonly retriesExhausted: number;
  readonly breakerOpens: number | null;
  /** Attempts the open (or busy half-open) breaker refused; never sent. */
  readonly breakerRejected: number | null;
  /** Client-seconds the breakers spent open (sum over clients). */
  readonly breakerOpenS: number | null;
  /** Attempts refused by client-side adaptive throttling; never sent. */
  readonly throttled: number | null;
  readonly hedgesSent: number | null;
  /** Origins whose success came from a hedge. */
  readonly hedgesWon: number | null;
  /** Hedges not sent for want of a budget token. */
  readonly hedgesDenied: number | null;
  /** Attempts the client cancelled (hedge losers, abandoned origins, the run's end). */
  readonly cancelledAttempts: number;
  /** Origins whose user gave up (outcome `abandoned`). */
  readonly abandoned: number | null;
}

export interface WindowSummary {
  readonly seconds: number;
  readonly offeredPerS: number | null;
  readonly goodputPerS: number | null;
  readonly amplification: number | null;
  readonly amplificationServer: number | null;
  readonly latencyMs: Omit<LatencySummary, 'p999'>;
}

/** summary.json of one run: the contract every consumer reads (DESIGN.md §7). */
export interface RunSummary {
  readonly experiment: string;
  readonly runtime: string;
  readonly run: number;
  readonly seed: number;
  readonly scale: number;
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
  const recovery = analyzeRecovery({
    goodput: goodputPerS,
    baselineGoodputPerS: baseline.goodputPerS,
    triggerEndS: trig.endMs / 1000,
    triggerDurationS: (trig.endMs - trig.startMs) / 1000,
    observedEndS: applied ? observedEndMs / 1000 : trig.endMs / 1000,
    windowS: plan.recovery.windowMs / 1000,
    holdS: plan.recovery.holdMs / 1000,
    tolerance: plan.recovery.tolerance,
    within: plan.recovery.within,
  });

  const hypothesis = judgeHypotheses(plan, recorded, recovery, end);
  const bw = recorded.windows['baseline'];
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
    generatorCpu: x.generatorCpu ?? null,
  });
  const tail = tailOf(trig.endMs / 1000, observedEndMs / 1000);
  const verdict = classifyOutcome({
    validity,
    recovery,
    goodputPerS,
    backlog: x.server ? x.server.queueDepth : null,
    triggerEndS: trig.endMs / 1000,
    observedEndS: observedEndMs / 1000,
    sustaining: tail
      ? sustainingFigures(plan, recorded, x.server, { startMs: tail.fromS * 1000, endMs: tail.toS * 1000 })
      : null,
  });

  const warnings: string[] = [];
  for (const f of describeFailed(validity)) warnings.push(`invalid run: ${f}`);
  if (t.offered !== t.recorded)
    warnings.push(
      `offered (${t.offered}) != recorded (${t.recorded}): some origin requests have no outcome; this run is unusable`,
    );
  if (x.interrupted)
    warnings.push(
      `the run was interrupted at ${round(observedEndMs / 1000, 3)} s, before its schedule ended; figures cover only the seconds observed${applied ? '' : ', and no trigger was reached'}`,
    );
  const limits = validity.limits;
  if (recorded.scheduleLag.p99 !== null && recorded.scheduleLag.p99 > limits.lagP99Ms)
    warnings.push(
      `${t.lateSends} late sends (${pct(t.lateSends / Math.max(1, t.offered))} of origins sent more than 1 ms after their intended time), schedule lag p99 ${round(recorded.scheduleLag.p99, 3)} ms above its limit of ${limits.lagP99Ms} ms (${limits.lagP99Why}): the generator could not keep the schedule`,
    );
  if (!hasHypothesis(plan.experiment.hypothesis))
    warnings.push(
      'no steady-state hypothesis declared: run validity cannot check that the baseline was healthy',
    );
  const bResp = bw?.response.p99 ?? null;
  const bServ = bw?.service.p99 ?? null;
  const omissionFactor = bResp !== null && bServ !== null && bServ > 0 ? round(bResp / bServ, 3) : null;
  if (omissionFactor !== null && omissionFactor > 2)
    warnings.push(
      `omission factor ${omissionFactor} > 2 in the baseline: response times include long waits before sending`,
    );
  if (plan.load.model === 'closed')
    warnings.push(
      'CLOSED loop: users wait for each answer before sending again, so a slow system receives less load and its response times hide the queueing (for comparison with the open loop only)',
    );
  if (recorded.clientWait.samples > 0)
    warnings.push(
      `the client's connection cap (${connectionCap(plan)}) made ${recorded.clientWait.samples} attempts wait for a connection (p99 ${recorded.clientWait.p99} ms, max ${recorded.clientWait.max} ms): the open loop turned partly closed`,
    );
  if (x.server === null)
    warnings.push('no server-side metrics were scraped: server-side amplification is unmeasured');

  return {
    experiment: plan.experiment.name,
    runtime: x.runtime,
    run: plan.run,
    seed: plan.seed,
    scale: plan.scale,
    usable: t.offered === t.recorded && !x.interrupted && t.outcomes.unsent === 0,
    warnings,
    validity,
    outcome: verdict.outcome,
    outcomeReason: verdict.reason,
    sustainingEffect: verdict.sustainingEffect,
    projectedRecoveryS: verdict.projectedRecoveryS,
    trend: verdict.trend,
    offered: t.offered,
    recorded: t.recorded,
    attempts: t.attempts,
    lateSends: t.lateSends,
    omissionFactor,
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
  };
}

/** A planned trigger and its record (in schedule order), when the caller has no TriggerSchedule. */
function asTriggerOutcome(p: PlannedTrigger, t: TriggerRecord | undefined): TriggerOutcome {
  return {
    describe: t?.describe ?? `${p.spec.kind} ${triggerTarget(p.spec)}`,
    plannedStartMs: t?.plannedStartMs ?? p.startMs,
    startMs: t?.startMs ?? null,
    applyError: t?.error,
    undoError: t?.undoError,
    undone: t !== undefined,
  };
}

/**
 * Each phase's offered load as planned (expected arrivals of the open loop's plan) and as
 * achieved (first attempts by actual send time), over the phase's whole buckets that were
 * observed; the last bucket of the run is left out (sends due just before the end land there).
 */
export function phaseRates(plan: RunPlan, r: Recorded, observedEndMs: number): PhaseRate[] {
  const out: PhaseRate[] = [];
  const p = plan.phases;
  const phases: [string, Span][] = [
    ['warm-up', p.warmup],
    ['baseline', p.baseline],
    ['trigger window', p.trigger],
    ['observation', p.observe],
  ];
  for (const [phase, span] of phases) {
    const [a, b0] = bucketRange(
      { startMs: span.startMs, endMs: Math.min(span.endMs, observedEndMs) },
      r.bucketMs,
    );
    const b = Math.min(b0, Math.floor(observedEndMs / r.bucketMs));
    if (b <= a) continue;
    let achieved = 0;
    for (let i = a; i < b; i++) achieved += r.series.firstSends[i] ?? 0;
    out.push({
      phase,
      seconds: ((b - a) * r.bucketMs) / 1000,
      expected: expectedArrivals(plan, a * r.bucketMs, b * r.bucketMs),
      achieved,
    });
  }
  return out;
}

/** Expected open-loop arrivals in [fromMs, toMs) of the plan; null for a closed loop. */
export function expectedArrivals(plan: RunPlan, fromMs: number, toMs: number): number | null {
  return expectedArrivalsIn(plan.load.arrival, { startMs: fromMs, endMs: toMs });
}

/** The figures that name a sustaining effect, over a span (the tail of the observation). */
function sustainingFigures(
  plan: RunPlan,
  r: Recorded,
  server: ServerSeries | null,
  span: Span,
): SustainingFigures {
  const [a, b] = bucketRange(span, r.bucketMs);
  const seconds = ((b - a) * r.bucketMs) / 1000;
  const sum = (arr: readonly (number | null)[] | undefined, x = a, y = b): number | null => {
    if (!arr) return null;
    let v = 0;
    let any = false;
    for (let i = x; i < y; i++)
      if (arr[i] !== null && arr[i] !== undefined) {
        v += arr[i]!;
        any = true;
      }
    return any ? v : null;
  };
  const offered = sum(r.series.offered) ?? 0;
  const attempts = sum(r.series.attempts) ?? 0;
  const good = sum(r.series.goodput) ?? 0;
  const failed = FAILURE_KINDS.reduce((x, k) => x + (sum(r.series.failures[k]) ?? 0), 0);
  const received = server ? sum(server.received) : null;
  const hitRatio = (x: number, y: number): number | null => {
    const h = sum(server?.extra?.['cache_hits'], x, y);
    const m = sum(server?.extra?.['cache_misses'], x, y);
    return h !== null && m !== null && h + m > 0 ? h / (h + m) : null;
  };
  const [ba, bb] = bucketRange(plan.phases.baseline, r.bucketMs);
  const serverAmp = server ? serverAmplification(server, r.series.offered, a, b) : null;
  // Seconds spent on error paths, every kind (error_path_seconds_<kind> columns).
  const errorPathCols = Object.entries(server?.extra ?? {}).filter(([col]) =>
    col.startsWith('error_path_seconds_'),
  );
  const errorPathS = errorPathCols.reduce((x, [, arr]) => x + (sum(arr) ?? 0), 0);
  // Every replica's workers (the error-path columns are summed over the replicas).
  const workerS = apiReplicaCount(plan.experiment.lab.api) * plan.experiment.lab.api.workers * seconds;
  return {
    capacityPerS: plan.capacity.usedPerS,
    receivedPerS: received === null ? null : received / seconds,
    attemptsPerS: attempts / seconds,
    amplification: offered > 0 ? attempts / offered : null,
    amplificationServer: serverAmp,
    cacheHitRatio: hitRatio(a, b),
    baselineCacheHitRatio: hitRatio(ba, bb),
    errorRatio: good + failed > 0 ? failed / (good + failed) : null,
    errorPathShare: errorPathCols.length > 0 && workerS > 0 ? errorPathS / workerS : null,
  };
}

/** Whether the experiment declares any threshold (global or per class). */
export function hasHypothesis(h: Experiment['hypothesis']): boolean {
  return (
    HYPOTHESIS_METRICS.some((m) => h[m] !== undefined) ||
    Object.values(h.classes ?? {}).some((c) => HYPOTHESIS_METRICS.some((m) => c[m] !== undefined))
  );
}

/**
 * Every threshold judged in each window: the global ones on every origin, then each
 * class's on that class's origins alone, first in the baseline and then after recovery
 * (from the recovery point to the end of the observation). When the run did not
 * recover there is no after-recovery window: those verdicts are unmeasured, never a
 * pass. The same entries in the same order for every run, so repetitions line up.
 *
 * Counts (offered, goodput, failures) are whole buckets, as the window tables; latency
 * is the successes that completed in the same buckets.
 */
export function judgeHypotheses(
  plan: RunPlan,
  recorded: Recorded,
  recovery: RecoveryResult,
  endMs: number,
): HypothesisResult[] {
  const h = plan.experiment.hypothesis;
  const s = recorded.series;
  const bucketMs = recorded.bucketMs;
  const sets: { cls?: string; thresholds: Thresholds }[] = [
    { thresholds: h },
    ...Object.entries(h.classes ?? {}).map(([cls, thresholds]) => ({ cls, thresholds })),
  ];
  const windows: { name: HypothesisWindow; span: Span | null; note?: string }[] = [
    { name: 'baseline', span: plan.phases.baseline },
    recovery.recoveredAtS !== null
      ? { name: 'afterRecovery', span: { startMs: recovery.recoveredAtS * 1000, endMs } }
      : { name: 'afterRecovery', span: null, note: `no recovery point: ${recovery.reason}` },
  ];
  const none: WindowFigures = { offered: 0, goodput: 0, failed: 0, latencyMs: emptyLatency() };
  // An origin the user gave up on purpose (a cancelled stream, patience run out) is not an error.
  const failureKinds = FAILURE_KINDS.filter((k) => k !== 'abandoned');
  const figures = (span: Span | null, name: HypothesisWindow, cls: string | undefined): WindowFigures => {
    if (span === null) return none;
    const [a, b] = bucketRange(span, bucketMs);
    const sum = (arr: readonly number[] | undefined): number => {
      let x = 0;
      for (let i = a; i < b; i++) x += arr?.[i] ?? 0;
      return x;
    };
    const log = recorded.successes;
    const none95 = { samples: 0, value: null };
    // p95 and TTFT p95 come from the success log (the Recorder's windows keep no p95, and no TTFT).
    const p95 = (of: 'response' | 'ttft', idx?: number) =>
      log?.percentile(of, 95, a * bucketMs, b * bucketMs, idx) ?? none95;
    if (cls === undefined)
      return {
        offered: sum(s.offered),
        goodput: sum(s.goodput),
        failed: failureKinds.reduce((x, k) => x + sum(s.failures[k]), 0),
        // The baseline is a window the Recorder kept whole; the others come from the success log.
        latencyMs:
          name === 'baseline'
            ? (recorded.windows['baseline']?.response ?? emptyLatency())
            : (log?.latency(a * bucketMs, b * bucketMs) ?? emptyLatency()),
        p95Ms: p95('response'),
        ttftP95Ms: p95('ttft'),
      };
    const c = recorded.classes?.[cls];
    const idx = recorded.classIndex?.[cls];
    return {
      offered: sum(c?.offered),
      goodput: sum(c?.goodput),
      failed: sum(c?.failed),
      latencyMs: log && idx !== undefined ? log.latency(a * bucketMs, b * bucketMs, idx) : emptyLatency(),
      p95Ms: idx !== undefined ? p95('response', idx) : none95,
      ttftP95Ms: idx !== undefined ? p95('ttft', idx) : none95,
    };
  };
  const out: HypothesisResult[] = [];
  for (const w of windows)
    for (const set of sets) {
      const metrics = HYPOTHESIS_METRICS.filter((m) => set.thresholds[m] !== undefined);
      if (metrics.length === 0) continue;
      const f = figures(w.span, w.name, set.cls);
      for (const metric of metrics) {
        const r = judge(metric, set.thresholds[metric]!, w.name, f);
        out.push({
          ...r,
          ...(set.cls !== undefined ? { class: set.cls } : {}),
          span: w.span
            ? { startS: round(w.span.startMs / 1000, 3), endS: round(w.span.endMs / 1000, 3) }
            : null,
          ...(w.note ? { note: w.note } : {}),
        });
      }
    }
  return out;
}

export function policySummary(r: Recorded): PolicySummary {
  const c = r.totals.policies;
  const p = r.policies;
  const when = (on: boolean, v: number): number | null => (on ? v : null);
  const openMs = r.series.breakerOpen.reduce((a, f) => a + f, 0) * r.bucketMs * p.clients;
  return {
    clients: p.clients,
    retries: c.retries,
    retriesDeniedByBudget: when(p.budget, c.retriesDeniedBudget),
    retriesCutByDeadline: c.retriesCutByDeadline,
    retriesExhausted: c.retriesExhausted,
    breakerOpens: when(p.breaker, c.breakerOpens),
    breakerRejected: when(p.breaker, c.breakerRejected),
    breakerOpenS: when(p.breaker, round(openMs / 1000, 3)),
    throttled: when(p.throttle, c.throttled),
    hedgesSent: when(p.hedge, c.hedgesSent),
    hedgesWon: when(p.hedge, c.hedgesWon),
    hedgesDenied: when(p.hedge, c.hedgesDenied),
    cancelledAttempts: c.cancelledAttempts,
    abandoned: when(p.abandon, r.totals.outcomes.abandoned),
  };
}

/** Buckets whose start lies in the span (bucket-aligned: a window is whole buckets). */
export function bucketRange(span: Span, bucketMs: number): [number, number] {
  return [Math.ceil(span.startMs / bucketMs - 1e-9), Math.ceil(span.endMs / bucketMs - 1e-9)];
}

function sumSpan(arr: readonly (number | null)[], span: Span, bucketMs: number): number {
  const [a, b] = bucketRange(span, bucketMs);
  let s = 0;
  for (let i = a; i < b; i++) s += arr[i] ?? 0;
  return s;
}

function windowSummary(r: Recorded, server: ServerSeries | null, span: Span, name: string): WindowSummary {
  const [a, b] = bucketRange(span, r.bucketMs);
  const seconds = ((b - a) * r.bucketMs) / 1000;
  const offered = sumSpan(r.series.offered, span, r.bucketMs);
  const attempts = sumSpan(r.series.attempts, span, r.bucketMs);
  const goodput = sumSpan(r.series.goodput, span, r.bucketMs);
  const serverAmp = server ? serverAmplification(server, r.series.offered, a, b) : null;
  const lat = r.windows[name]?.response ?? emptyLatency();
  const { p999: _drop, ...latencyMs } = lat;
  return {
    seconds,
    offeredPerS: seconds > 0 ? round(offered / seconds, 3) : null,
    goodputPerS: seconds > 0 ? round(goodput / seconds, 3) : null,
    amplification: offered > 0 ? round(attempts / offered, 3) : null,
    amplificationServer: serverAmp === null ? null : round(serverAmp, 3),
    latencyMs,
  };
}

/**
 * Server-side amplification over buckets [a, b): requests the service received divided
 * by origins intended, both over exactly the buckets the scrapes cover. A scrape that
 * follows failed ones carries the increase of several buckets; it counts with all the
 * buckets it covers. Null when no scrape in the window answered.
 */
export function serverAmplification(
  server: ServerSeries,
  offered: readonly number[],
  a: number,
  b: number,
): number | null {
  let received = 0;
  let intended = 0;
  let any = false;
  for (let i = a; i < b; i++) {
    const v = server.received[i];
    const span = server.span[i];
    if (v === null || v === undefined || !span) continue;
    any = true;
    received += v;
    for (let j = i - span + 1; j <= i; j++) intended += offered[j] ?? 0;
  }
  return any && intended > 0 ? received / intended : null;
}

function emptyLatency(): LatencySummary {
  return { samples: 0, mean: null, p50: null, p90: null, p99: null, p999: null, max: null };
}

function pct(x: number): string {
  return `${round(x * 100, 2)}%`;
}

/**
 * The trigger window the recovery is measured from: the first actual start to the last
 * actual end; the planned window when no trigger was applied (an interrupted run).
 */
export function triggerWindow(plan: RunPlan, applied: readonly TriggerRecord[]): TriggerRecord {
  const specs =
    applied.length > 0
      ? applied
      : plan.triggers.map((t) => ({ ...t, kind: t.spec.kind, target: triggerTarget(t.spec) }));
  const join = (xs: string[]): string => [...new Set(xs)].join('+');
  return {
    kind: join(specs.map((t) => t.kind)),
    target: join(specs.map((t) => t.target)),
    startMs: applied.length > 0 ? Math.min(...applied.map((t) => t.startMs)) : plan.phases.trigger.startMs,
    endMs: applied.length > 0 ? Math.max(...applied.map((t) => t.endMs)) : plan.phases.trigger.endMs,
  };
}
