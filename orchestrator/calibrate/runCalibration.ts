import type { ComposeOptions } from '../lab/dockerData.js';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { profiledArrivals } from '../../bench/arrival/profiled.js';
import { RateProfile } from '../../bench/arrival/profile.js';
import type { ArrivalProcess } from '../../bench/arrival/ArrivalProcess.js';
import { drive } from '../../bench/driver.js';
import { eventSink } from '../../bench/record/eventLog.js';
import { Recorder } from '../../bench/record/Recorder.js';
import { seededRng } from '../../foundation/rng.js';
import { BenchError } from '../../foundation/errors.js';
import type { Lab } from '../lab/Lab.js';
import { runtimePlugin } from '../lab/RuntimePlugin.js';
import type { Runtime } from '../lab/runtimes.js';
import { writeReport } from '../report/writeReport.js';
import type { StepTable } from '../report/tables.js';
import { resultsDir, writeJson } from '../results/files.js';
import { provenance } from '../results/manifest.js';
import { timeseriesTable } from '../results/timeseries.js';
import { writeTimeseries } from '../results/timeseriesFiles.js';
import { clientModel, describeClient, policyPresence, worstOriginMs } from '../run/client.js';
import { runBody } from '../run/runBody.js';
import { StatusLine } from '../run/status.js';
import { parsePrometheusText } from '../scrape/prometheusText.js';
import { resolveRate } from '../spec/loadPlan.js';
import { nominalCapacityPerS, planRun } from '../spec/plan.js';
import type { Experiment } from '../spec/schema.js';
import type { RateSpec } from '../../foundation/units.js';
import { DEFAULT_RULE, judgeSteps, type SaturationRule } from './saturation.js';
import {
  DEFAULT_LADDER,
  DEFAULT_REFINE,
  DEFAULT_SETTLE_MS,
  DEFAULT_STEP_MS,
  measureStep,
  OVERLOAD_FACTOR,
  stepExperiment,
  wholeSeconds,
  type StepDetail,
  type StepKind,
  type StepRun,
} from './steps.js';
import { Journal } from '../trigger/journal.js';
import { saveCalibration } from './store.js';
import type { CalibrationResult } from './result.js';

export type { CalibrationResult } from './result.js';
import { round } from '../../foundation/round.js';

export interface CalibrationOptions {
  readonly scale: number;
  readonly out?: string | undefined;
  readonly resultsRoot?: string;
  /** The ladder's rates (absolute, or % of the nominal capacity); default DEFAULT_LADDER. */
  readonly steps?: readonly RateSpec[] | undefined;
  /** Each step's length and settling time, before `--scale`. */
  readonly stepMs?: number | undefined;
  readonly settleMs?: number | undefined;
  /** Bisections between the saturation step and the step above it. */
  readonly refine?: number | undefined;
  readonly rule?: SaturationRule | undefined;
  readonly runtime: Runtime;
  /** The docker and swarm runtimes' project (stack) and image overrides. */
  readonly docker?: ComposeOptions | undefined;
  /** The local runtime's CPU pinning (absent: pinned from 4 CPUs; true: --pin; false: --no-pin). */
  readonly pin?: boolean;
  readonly quiet?: boolean;
  readonly stop: AbortSignal;
  readonly sourceFile?: string | undefined;
  readonly manifestExtra?: Record<string, unknown>;
  /** Store the capacity found (default true). */
  readonly store?: boolean;
  /** The state directory for the store (default: stateDir()). */
  readonly storeRoot?: string | undefined;
}

/** The step test's plan, resolved (what `--dry-run` prints). */
export interface CalibrationPlan {
  readonly ladderPerS: readonly number[];
  readonly stepMs: number;
  readonly settleMs: number;
  readonly refine: number;
  readonly rule: SaturationRule;
  /** null: your own system (system:), whose work is not declared. */
  readonly nominalPerS: number | null;
  /** The longest the test can take: every step, refinement and the overload probe, without drains or lab start-up. */
  readonly maxWallMs: number;
}

export function planCalibration(
  e: Experiment,
  o: Omit<CalibrationOptions, 'runtime' | 'stop'>,
): CalibrationPlan {
  // Your own system has no nominal capacity to take fractions of: its steps are absolute.
  const nominalPerS = e.lab ? nominalCapacityPerS(e) : null;
  const specs = o.steps ?? DEFAULT_LADDER.map((capacityFraction) => ({ capacityFraction }));
  if (nominalPerS === null && (o.steps === undefined || specs.some((r) => !('perS' in r))))
    throw new BenchError(
      'E_USAGE',
      `${e.name} declares its own system (system:), which has no nominal capacity to take % of: calibrate it with absolute steps`,
      'give --steps with absolute rates, e.g. --steps 50/s,100/s,200/s,400/s',
    );
  const ladderPerS = [...new Set(specs.map((r) => round(resolveRate(r, nominalPerS ?? Number.NaN), 3)))].sort(
    (a, b) => a - b,
  );
  const stepMs = wholeSeconds((o.stepMs ?? DEFAULT_STEP_MS) * o.scale, 2);
  const settleMs = Math.min(wholeSeconds((o.settleMs ?? DEFAULT_SETTLE_MS) * o.scale, 1), stepMs - 1000);
  const refine = o.refine ?? DEFAULT_REFINE;
  return {
    ladderPerS,
    stepMs,
    settleMs,
    refine,
    rule: o.rule ?? DEFAULT_RULE,
    nominalPerS,
    maxWallMs: (ladderPerS.length + refine + 1) * stepMs,
  };
}

export const RULE_DEFINITION =
  "a step is sustained when goodput >= (1 - tolerance) x offered and p99 <= latencyFactor x the lowest step's p99 " +
  '(both over the step after its settling time); the saturation point is the highest sustained step with no sustained step above it';

/**
 * `metabench calibrate`: a step test on the experiment's lab. One lab, one client, one
 * Recorder for the whole test, on the run machinery of `metabench run` (runBody: the
 * lab, its journal entry, the recorder, transport, scraper, status line and teardown);
 * each step a flat open-loop rate
 * for `stepMs`, starting on a whole second once the api has drained the previous step
 * (no queued or running request), so every step is measured from an idle system rather
 * than from the hangover of the step before it. The ladder runs in increasing order;
 * then `refine` bisections between the saturation step and the step above it; then one
 * step at 150% of the saturation point. Writes DIR/calibration.json, DIR/steps.json (the
 * report's StepTable), DIR/manifest.json, DIR/timeseries.csv, DIR/events.arrow,
 * DIR/lab.log and the report, and stores the capacity found (store.ts).
 */
export async function runCalibration(
  e: Experiment,
  opts: CalibrationOptions,
): Promise<{ dir: string; result: CalibrationResult }> {
  const cp = planCalibration(e, opts);
  if (cp.ladderPerS.length < 2)
    throw new BenchError('E_USAGE', 'a step test needs at least two steps of different rates');
  const dir = resultsDir(`${e.name}-calibration`, opts.out, opts.resultsRoot);
  const status = new StatusLine(process.stderr, opts.quiet ?? false);
  const peak = OVERLOAD_FACTOR * Math.max(...cp.ladderPerS);
  const se = stepExperiment(e, peak);
  const plan = planRun(se, { scale: 1, run: 1, sourceFile: opts.sourceFile });
  // The lab's processes are journaled like a fault (as a run's): a killed calibrate leaves none behind.
  const journal = new Journal();
  const labEntry = 'calibration-lab';
  const runtime = runtimePlugin(opts.runtime);
  if (!runtime.lab)
    throw new BenchError('E_USAGE', 'calibrate measures a real lab: use --runtime local, docker or swarm');
  const rt = runtime.run(plan, dir, {
    worstOriginMs: worstOriginMs(se.client),
    ...(opts.docker ? { docker: opts.docker } : {}),
    ...(opts.pin !== undefined ? { pin: opts.pin } : {}),
    onProcessesChanged: () =>
      journal.record({ id: labEntry, appliedAt: new Date().toISOString(), undo: rt.lab.teardownRecipe() }),
  });
  const startedAt = new Date();
  status.say(
    `metabench calibrate ${e.name}: ${cp.ladderPerS.length} steps of ${cp.stepMs / 1000} s (${cp.ladderPerS.join(', ')} req/s${cp.nominalPerS === null ? '' : `; nominal capacity ${round(cp.nominalPerS, 3)}/s`}) → ${dir}`,
  );

  const runs: StepRun[] = [];
  let phase = 'starting';
  const x = await runBody(
    plan,
    rt,
    {
      journal,
      status,
      stop: opts.stop,
      labEntry,
      onLabUp: () => {
        writeJson(join(dir, 'manifest.json'), {
          ...provenance(startedAt, rt.lab),
          kind: 'calibration',
          seed: e.seed,
          scale: opts.scale,
          calibration: { ...cp, client: se.client },
          experiment: e,
          ...opts.manifestExtra,
        });
        return eventSink('all', dir);
      },
    },
    {
      label: `[${e.name} calibrate]`,
      progress: (now) => ({ phase, totalS: Math.max(cp.maxWallMs, now) / 1000 }),
      recorder: (events) =>
        new Recorder(
          {
            policies: policyPresence(clientModel(se.client)),
            ...(e.load.mix ? { classes: e.load.mix.map((c) => c.name) } : {}),
            retainFromMs: 0,
          },
          events,
        ),
      // The steps, one after another on the one lab, client and recorder; no trigger.
      drive: async ({ lab, clock, recorder: rec, driving }) => {
        let nextId = 0;
        const runStep = async (ratePerS: number, kind: StepKind): Promise<StepDetail> => {
          const backlog = await drained(lab, Math.max(30_000, 3 * cp.stepMs), opts.stop, backlogOf(e));
          const startMs = (Math.floor(clock.now() / 1000) + 1) * 1000;
          const step: StepRun = {
            index: runs.length + 1,
            kind,
            ratePerS,
            startMs,
            endMs: startMs + cp.stepMs,
            measureFromMs: startMs + cp.settleMs,
            backlogAtStart: backlog,
          };
          runs.push(step);
          phase = `step ${step.index} ${round(ratePerS, 3)}/s`;
          rec.note({ e: 'step', ...step });
          const arrivals = counted(
            profiledArrivals(
              new RateProfile([{ durationMs: cp.stepMs, fromPerS: ratePerS, toPerS: ratePerS }], startMs),
              e.load.arrival,
              seededRng(e.seed, `arrivals-step-${step.index}`),
              `step ${step.index}`,
            ),
          );
          await drive({ ...driving, arrivals, firstOriginId: nextId });
          nextId += arrivals.count();
          const d = measureStep(rec.peek(), step);
          status.say(
            `  step ${step.index} (${kind}) ${round(ratePerS, 3)}/s: goodput ${d.goodputPerS ?? '–'}/s of ${d.offeredPerS ?? '–'}/s offered, p99 ${d.latencyMs.p99 ?? '–'} ms (n=${d.latencyMs.samples})`,
          );
          return d;
        };

        const judged: StepDetail[] = [];
        for (const r of cp.ladderPerS) {
          if (opts.stop.aborted) break;
          judged.push(await runStep(r, 'ladder'));
        }
        for (let k = 0; k < cp.refine && !opts.stop.aborted; k++) {
          const j = judgeSteps(judged, cp.rule);
          if (j.status !== 'saturated' || j.saturationIndex === null || j.aboveIndex === null) break;
          const lo = judged[j.saturationIndex]!.ratePerS;
          const hi = judged[j.aboveIndex]!.ratePerS;
          const mid = round((lo + hi) / 2, 3);
          if (hi - lo < Math.max(1, 0.02 * lo)) break; // fine enough
          judged.push(await runStep(mid, 'refine'));
        }
        const j = judgeSteps(judged, cp.rule);
        if (j.status === 'saturated' && j.saturationIndex !== null && !opts.stop.aborted)
          await runStep(round(OVERLOAD_FACTOR * judged[j.saturationIndex]!.ratePerS, 3), 'overload');
      },
    },
  );
  const failure = x.failure;
  if (!x.recorded) throw failure;

  const recorded = x.recorded;
  const details = runs.map((s) => measureStep(recorded, s));
  const phaseOf = (ms: number): string => {
    const s = runs.find((x) => ms >= x.startMs && ms < x.endMs);
    if (!s) return 'drain';
    return `step-${s.index}${ms < s.measureFromMs ? '-settle' : ''}`;
  };
  writeTimeseries(dir, timeseriesTable(plan, recorded, x.server, x.procs, phaseOf));
  const interrupted = opts.stop.aborted || failure !== undefined;
  const result = summarize(e, se, cp, opts, details, startedAt, interrupted);
  let stored: CalibrationResult['stored'] = {
    notStored: interrupted
      ? 'the step test was interrupted'
      : opts.store === false
        ? '--no-store'
        : `no saturation point (${result.status})`,
  };
  if (!interrupted && opts.store !== false && result.saturation)
    stored = {
      file: saveCalibration(
        e,
        opts.runtime,
        {
          capacityPerS: result.saturation.offeredPerS,
          goodputAtSaturationPerS: result.saturation.goodputPerS,
          experimentFile: opts.sourceFile ?? null,
          resultsDir: dir,
          scale: opts.scale,
          measuredAt: startedAt,
        },
        opts.storeRoot !== undefined ? { root: opts.storeRoot } : {},
      ),
    };
  const final: CalibrationResult = { ...result, stored };
  writeJson(join(dir, 'calibration.json'), final);
  writeJson(join(dir, 'steps.json'), stepTable(final));
  await writeReport(dir);
  if (failure !== undefined) throw failure;
  return { dir, result: final };
}

function summarize(
  e: Experiment,
  se: Experiment,
  cp: CalibrationPlan,
  opts: CalibrationOptions,
  details: readonly StepDetail[],
  startedAt: Date,
  interrupted: boolean,
): Omit<CalibrationResult, 'stored'> {
  const judgedSteps = details.filter((d) => d.kind !== 'overload');
  const j = judgeSteps(judgedSteps, cp.rule);
  const verdictOf = new Map(judgedSteps.map((d, i) => [d, j.judgements[i]!]));
  const sat = j.saturationIndex !== null && !interrupted ? judgedSteps[j.saturationIndex]! : null;
  const overloadStep = details.find((d) => d.kind === 'overload') ?? null;
  const warnings: string[] = [];
  if (interrupted) warnings.push('the step test was interrupted; its figures cover only the steps that ran');
  // As in a run: more than 0.1% of origins sent over 1 ms late means the generator did not keep its schedule.
  const late = details.filter((d) => d.offered > 0 && d.lateSends / d.offered > 0.001);
  if (late.length)
    warnings.push(
      `late sends at step ${late.map((d) => `${d.index} (${d.ratePerS}/s: ${round((100 * d.lateSends) / d.offered, 3)}%)`).join(', ')}: the load generator did not keep its schedule (a busy machine?), so those steps' response times include its lag`,
    );
  for (const d of details)
    if (d.backlogAtStart > 0)
      warnings.push(
        `step ${d.index} (${d.ratePerS}/s) started with ${d.backlogAtStart} requests still queued or running at the api (the drain gave up)`,
      );
  const anomalies = j.anomalies.map((i) => judgedSteps[i]!.ratePerS);
  if (anomalies.length)
    warnings.push(
      `steps at ${anomalies.join(', ')} req/s were not sustained though a higher step was (noise: take longer steps, --step-duration)`,
    );
  const peakProd =
    e.load.productionPeak && 'perS' in e.load.productionPeak ? e.load.productionPeak.perS : null;
  const ratio = sat && peakProd ? round(sat.ratePerS / peakProd, 3) : null;
  const margin = {
    productionPeakPerS: peakProd,
    ratio,
    note:
      peakProd === null
        ? 'no production peak declared (load.productionPeak, e.g. --set load.productionPeak=300/s)'
        : sat === null
          ? 'no saturation point to compare the production peak with'
          : ratio! < 1
            ? `the production peak (${peakProd}/s) is above the saturation point (${sat.ratePerS}/s): no margin`
            : `saturation ${sat.ratePerS}/s / production peak ${peakProd}/s = ${ratio}x`,
  };
  const overload =
    sat && overloadStep
      ? {
          offeredPerS: overloadStep.ratePerS,
          goodputPerS: overloadStep.goodputPerS,
          ofSaturationGoodput:
            overloadStep.goodputPerS !== null && sat.goodputPerS
              ? round(overloadStep.goodputPerS / sat.goodputPerS, 3)
              : null,
          ofOffered: overloadStep.goodputRatio,
          p99Ms: overloadStep.latencyMs.p99,
          failures: overloadStep.failures,
        }
      : null;
  if (sat && overloadStep) {
    const o = judgeSteps([...judgedSteps, overloadStep], cp.rule);
    if (o.judgements.at(-1)?.sustained)
      warnings.push(
        `the step at 150% of the saturation point (${overloadStep.ratePerS}/s) was sustained: the steps above the saturation point were noise, and the capacity is higher (take longer steps)`,
      );
  }
  const peakI = j.peakGoodputIndex;
  return {
    experiment: e.name,
    experimentFile: opts.sourceFile ?? null,
    runtime: opts.runtime,
    startedAt: startedAt.toISOString(),
    scale: opts.scale,
    seed: e.seed,
    usable: !interrupted,
    warnings,
    load: {
      arrival: e.load.arrival,
      description: `open loop, ${e.load.arrival} arrivals at a flat rate per step${e.load.mix ? `; mix ${e.load.mix.map((c) => `${c.name} ${round(c.share * 100, 3)}%`).join(', ')}` : ''}`,
    },
    client: describeClient(se.client),
    plan: {
      stepS: cp.stepMs / 1000,
      settleS: cp.settleMs / 1000,
      refine: cp.refine,
      ladderPerS: cp.ladderPerS,
    },
    rule: { ...cp.rule, definition: RULE_DEFINITION },
    nominalCapacityPerS: cp.nominalPerS === null ? null : round(cp.nominalPerS, 3),
    referenceP99Ms: j.referenceP99Ms,
    status: interrupted ? 'interrupted' : j.status,
    reason: interrupted ? 'the step test was interrupted' : j.reason,
    saturation: sat
      ? {
          offeredPerS: sat.ratePerS,
          measuredOfferedPerS: sat.offeredPerS,
          goodputPerS: sat.goodputPerS,
          p99Ms: sat.latencyMs.p99,
        }
      : null,
    bound:
      interrupted || j.status === 'saturated'
        ? null
        : j.status === 'not-reached'
          ? { atLeastPerS: judgedSteps[j.highestSustainedIndex!]!.ratePerS }
          : judgedSteps.length
            ? { belowPerS: Math.min(...judgedSteps.map((d) => d.ratePerS)) }
            : null,
    peakGoodput:
      peakI !== null
        ? { offeredPerS: judgedSteps[peakI]!.ratePerS, goodputPerS: judgedSteps[peakI]!.goodputPerS! }
        : null,
    margin,
    overload,
    overloadNote: overload
      ? null
      : sat
        ? 'the step at 150% of the saturation point did not run (interrupted)'
        : 'no saturation point: there is no 150% of it to measure',
    anomaliesPerS: anomalies,
    steps: details.map((d) => {
      const v = verdictOf.get(d);
      return { ...d, sustained: v ? v.sustained : null, why: v ? v.why : [] };
    }),
  };
}

/** steps.json: the StepTable the report draws (orchestrator/report/tables.ts), every step by rate. */
export function stepTable(r: CalibrationResult): StepTable {
  return {
    steps: [...r.steps]
      .sort((a, b) => a.ratePerS - b.ratePerS)
      .map((s) => ({
        offeredPerS: s.ratePerS,
        goodputPerS: s.goodputPerS,
        latencyMs: { samples: s.latencyMs.samples, p50: s.latencyMs.p50, p99: s.latencyMs.p99 },
      })),
    saturation: r.saturation
      ? { offeredPerS: r.saturation.offeredPerS, goodputPerS: r.saturation.goodputPerS }
      : null,
  };
}

/** Counts the arrivals it yields (the next step's origin ids start after them). */
function counted(a: ArrivalProcess): ArrivalProcess & { count(): number } {
  let n = 0;
  return {
    next() {
      const t = a.next();
      if (t !== undefined) n++;
      return t;
    },
    rate: (t) => a.rate(t),
    describe: () => a.describe(),
    count: () => n,
  };
}

/** Where a step's leftover backlog is read: the api's gauges, a system's mapped ones, or nowhere (then a wait). */
type Backlog = { readonly series: readonly string[] } | { readonly waitMs: number };

function backlogOf(e: Experiment): Backlog {
  if (e.lab) return { series: ['api_queue_depth', 'api_busy_workers'] };
  const m = e.system?.metrics;
  const series = [m?.queue, m?.busy].filter((s): s is string => s !== undefined);
  return series.length > 0 ? { series } : { waitMs: e.client.timeout };
}

/**
 * Waits until the api has no request queued or running (the previous step's backlog is
 * gone), polling its metrics every 100 ms; returns 0, or the backlog left when it gave
 * up after `maxMs` (or when the metrics do not answer).
 */
async function drained(lab: Lab, maxMs: number, stop: AbortSignal, backlog0: Backlog): Promise<number> {
  if ('waitMs' in backlog0) {
    // Nothing to read the backlog from: wait until every attempt of the step has timed out.
    await sleep(backlog0.waitMs);
    return 0;
  }
  const t0 = Date.now();
  for (;;) {
    let backlog = 0; // unknown when the metrics do not answer
    try {
      const m = parsePrometheusText(await lab.scrapeText('api', 1000));
      backlog = backlog0.series.reduce((x, s) => x + (m.get(s) ?? 0), 0);
      if (backlog === 0) return 0;
    } catch {
      // the api did not answer its metrics: try again until maxMs
    }
    if (Date.now() - t0 > maxMs || stop.aborted) return backlog;
    await sleep(100);
  }
}
