import { runtimePlugin } from '../lab/RuntimePlugin.js';
import type { ComposeOptions } from '../lab/dockerData.js';
import type { PriorityMode } from '../lab/proc/priority.js';
import { TWIN_DIR } from '../report/load.js';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { writeReport } from '../report/writeReport.js';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { RunSummary } from '../analysis/summary.js';
import { describeTally, tallyOutcomes } from '../analysis/tally.js';
import { BenchError } from '../../foundation/errors.js';
import { resultsDir, writeJson } from '../results/files.js';
import { runLabel } from '../results/naming.js';
import { appendIndex } from '../results/runIndex.js';
import { runExperiment, type RunOptions } from '../run/runExperiment.js';
import { runCapacity, twinCapacity } from '../run/runCapacity.js';
import { availableParallelism } from 'node:os';
import { inWorkers, SIMULATION_THREAD_LIMITS } from '../../foundation/workers.js';
import type { PointJob } from './pointWorker.js';
import { ctmcBeside } from '../analysis/markov/experiment.js';
import { round } from '../../foundation/round.js';
import type { LoadedSweep } from '../spec/sweep.js';
import type { PlannedCapacity } from '../spec/plan.js';
import type { CapacityMode } from '../calibrate/capacity.js';
import type { Runtime } from '../lab/runtimes.js';
import type { EventsMode } from '../../bench/record/eventLog.js';
import {
  incompletePointDirs,
  isPointComplete,
  pendingPoints,
  pointDir,
  type SweepPoint,
} from '../spec/sweepPlan.js';
import { DEFAULT_MAX_RERUNS, invalidRuns, rerunInvalidRuns, type PointRerun } from './rerunInvalid.js';
import { sweepIndexOutcome } from './indexOutcome.js';
import { sweepCsv, sweepMarkdown, sweepTable, pointVerdict, type PointResult } from './table.js';

export interface SweepOptions {
  readonly scale: number;
  readonly out?: string | undefined;
  readonly resultsRoot?: string;
  readonly repeat?: number | undefined;
  readonly quiet?: boolean;
  readonly stop: AbortSignal;
  /** The command line's overrides as written (recorded in each point's manifest). */
  readonly sets: readonly string[];
  readonly manifestExtra?: Record<string, unknown>;
  /** The docker and swarm runtimes' project (stack) and image overrides, for the lab points. */
  readonly docker?: ComposeOptions | undefined;
  /** The local runtime's CPU pinning (absent: pinned from 4 CPUs; true: --pin; false: --no-pin). */
  readonly pin?: boolean;
  /** The generator's scheduling priority in lab points (absent: high where permitted). */
  readonly priority?: PriorityMode;
  /** The runtime (--runtime), overriding the sweep file's. */
  readonly runtime?: Runtime | undefined;
  readonly capacity?: CapacityMode | undefined;
  /** Also simulate each point (the same experiment, seeds and scale) into point-<k>/twin/. */
  readonly twin?: boolean;
  /** Which events each run of a point writes (default failures: a sweep is read through its table and figures). */
  readonly events?: EventsMode | undefined;
  /**
   * Simulated points run at once (default: the machine's cores); each point's folder is
   * the one a serial sweep writes. Lab points run one at a time whatever this says: two
   * labs on one machine would disturb each other's measurements.
   */
  readonly jobs?: number | undefined;
  /** The capacity each point's `% capacity` rates resolve against, as planned (a bundle's re-run); absent: resolved here. */
  readonly planned?: ((p: SweepPoint) => PlannedCapacity | undefined) | undefined;
  /**
   * Re-run each complete point's invalid runs (rerunInvalid.ts), after the points still to
   * run, until each is valid or has been re-run `maxReruns` times (default DEFAULT_MAX_RERUNS).
   */
  readonly rerunInvalid?: boolean | undefined;
  readonly maxReruns?: number | undefined;
  /** Write each point's report (default true); its summaries and records are written either way. */
  readonly pointReports?: boolean | undefined;
  /** Write the sweep's own report (default true); its table (sweep.json, .csv, .md) is written either way. */
  readonly report?: boolean | undefined;
  /** The worker threads' entry (its module registers the runtimes: orchestrator/cli/sweepWorker.ts); without it points run one at a time. */
  readonly pointWorker?: URL | undefined;
}

export interface SweepResult {
  readonly dir: string;
  readonly ran: readonly SweepPoint[];
  readonly skipped: readonly SweepPoint[];
  readonly results: readonly PointResult[];
  /** The points whose invalid runs were re-run (--rerun-invalid), and how each run came out. */
  readonly rerun: readonly ({ readonly point: SweepPoint } & PointRerun)[];
}

const PLAN_FILE = 'sweep-plan.json';

/**
 * Runs every point of a sweep × its repeat, each point an experiment results folder
 * (DIR/point-<k>/, written by runExperiment), then the sweep table: DIR/sweep.json (the
 * report's SweepTable), DIR/sweep.csv and DIR/sweep.md, rewritten after each point.
 * Resumable: given the folder of an earlier run of the same sweep (--out DIR), points
 * whose results are complete are skipped and a half-run point is moved aside and rerun.
 */
export async function runSweep(s: LoadedSweep, opts: SweepOptions): Promise<SweepResult> {
  const repeat = opts.repeat ?? s.sweep.repeat ?? s.experiments[0]!.repeat;
  const runtime = opts.runtime ?? s.sweep.runtime;
  const plan = {
    name: s.sweep.name,
    file: s.file,
    experimentFile: s.experimentFile,
    design: s.sweep.design,
    runtime,
    repeat,
    scale: opts.scale,
    overrides: opts.sets,
    factors: s.factors,
    points: s.points,
  };
  const dir = sweepDir(
    `${s.sweep.name}-${runLabel({ runtime, scale: opts.scale, overrides: opts.sets })}`,
    opts,
    plan,
  );
  writeJson(join(dir, PLAN_FILE), plan);
  // results/index gets a line however the sweep ends: finished, interrupted, or failed.
  const index = (failed: boolean): void => {
    appendIndex(
      dir,
      {
        kind: 'sweep',
        file: s.file,
        runtime,
        scale: opts.scale,
        ...sweepIndexOutcome(
          s.points.map((p) => (isPointComplete(pointDir(dir, p), repeat) ? pointRuns(dir, p, repeat) : [])),
          { interrupted: opts.stop.aborted, failed },
        ),
      },
      opts.resultsRoot,
    );
  };
  try {
    const r = await sweepInto(s, opts, dir, repeat, runtime);
    index(false);
    return r;
  } catch (err) {
    index(true);
    throw err;
  }
}

/** The sweep's points (those not complete already), re-runs, tables and report, into `dir`. */
async function sweepInto(
  s: LoadedSweep,
  opts: SweepOptions,
  dir: string,
  repeat: number,
  runtime: Runtime,
): Promise<SweepResult> {
  const skipped = s.points.filter((p) => isPointComplete(pointDir(dir, p), repeat));
  for (const d of incompletePointDirs(dir, s.points, repeat)) {
    let n = 1;
    while (existsSync(`${d}.incomplete-${n}`)) n++;
    renameSync(d, `${d}.incomplete-${n}`);
  }
  const say = (m: string): void => {
    if (!opts.quiet) process.stderr.write(`${m}\n`);
  };
  say(
    `metabench sweep ${s.sweep.name}: ${s.points.length} points × ${repeat} run${repeat > 1 ? 's' : ''} (${s.sweep.design}, runtime ${runtime})` +
      (skipped.length ? `; ${skipped.length} already complete, skipped` : '') +
      ` → ${dir}`,
  );
  const ran: SweepPoint[] = [];
  const pending = pendingPoints(dir, s.points, repeat);
  const { virtualTime } = runtimePlugin(runtime).capabilities;
  const jobs = opts.jobs ?? (virtualTime ? availableParallelism() : 1);
  if (jobs > 1 && !virtualTime)
    say(`--jobs ${jobs}: lab points run one at a time (two labs on one machine disturb each other)`);
  if (jobs > 1 && virtualTime && pending.length > 1 && opts.pointWorker) {
    say(`${pending.length} points, ${Math.min(jobs, pending.length)} at a time`);
    await inWorkers(
      opts.pointWorker,
      pending,
      jobs,
      (p): PointJob => ({
        kind: 'sweep-point',
        experiment: { ...s.experiments[p.index - 1]!, repeat },
        options: { ...pointOptions(s, p, opts, dir), quiet: true },
      }),
      opts.stop,
      (p) => {
        ran.push(p);
        say(`point ${p.index}: ${pointVerdict(pointRuns(dir, p, repeat))} (${describePoint(p)})`);
        writeTables(dir, s);
      },
      SIMULATION_THREAD_LIMITS,
    );
    ran.sort((a, b) => a.index - b.index);
  } else
    for (const p of pending) {
      if (opts.stop.aborted) break;
      say(`point ${p.index}/${s.points.length}: ${describePoint(p)}`);
      const e = { ...s.experiments[p.index - 1]!, repeat };
      const r = await runExperiment(e, {
        ...pointOptions(s, p, opts, dir),
        stop: opts.stop,
        lab: {
          ...(opts.docker ? { docker: opts.docker } : {}),
          ...(opts.pin !== undefined ? { pin: opts.pin } : {}),
          ...(opts.priority !== undefined ? { priority: opts.priority } : {}),
        },
      });
      if (opts.twin && !virtualTime && !opts.stop.aborted) {
        // The point's simulated twin, then the point's report again, now with the comparison.
        const sim = await runExperiment(e, {
          scale: opts.scale,
          out: join(pointDir(dir, p), TWIN_DIR),
          quiet: true,
          stop: opts.stop,
          sourceFile: s.experimentFile,
          runtime: 'sim',
          // At the rate the lab point ran: the capacity its manifest recorded, not one resolved again.
          planned: twinCapacity(pointDir(dir, p)),
          events: opts.events === 'none' ? 'none' : 'failures',
          manifestExtra: { ...opts.manifestExtra, twinOf: pointDir(dir, p) },
        });
        if (opts.pointReports !== false) await writeReport(pointDir(dir, p));
        say(
          `point ${p.index}, simulated: ${pointVerdict(sim.runs)} (${describeTally(tallyOutcomes(sim.runs))})`,
        );
      }
      ran.push(p);
      say(`point ${p.index}: ${pointVerdict(r.runs)} (${describeTally(tallyOutcomes(r.runs))})`);
      writeTables(dir, s);
    }
  const rerun: ({ point: SweepPoint } & PointRerun)[] = [];
  if (opts.rerunInvalid)
    for (const p of s.points) {
      const d = pointDir(dir, p);
      if (opts.stop.aborted) break;
      if (!isPointComplete(d, repeat) || invalidRuns(d, repeat).length === 0) continue;
      say(`point ${p.index}: re-running its invalid runs (${describePoint(p)})`);
      const e = { ...s.experiments[p.index - 1]!, repeat };
      const o = pointOptions(s, p, opts, dir);
      const r = await rerunInvalidRuns(e, d, repeat, {
        scale: opts.scale,
        sourceFile: s.experimentFile,
        runtime,
        lab: {
          ...(opts.docker ? { docker: opts.docker } : {}),
          ...(opts.pin !== undefined ? { pin: opts.pin } : {}),
        },
        events: o.events,
        ...(o.manifestExtra ? { manifestExtra: o.manifestExtra } : {}),
        stop: opts.stop,
        maxReruns: opts.maxReruns ?? DEFAULT_MAX_RERUNS,
        quiet: opts.quiet ?? false,
        report: opts.pointReports !== false,
        capacity: runCapacity(e, runtime, o),
      });
      rerun.push({ point: p, ...r });
      const runs = pointRuns(dir, p, repeat);
      say(`point ${p.index}: ${pointVerdict(runs)} (${describeTally(tallyOutcomes(runs))})`);
      writeTables(dir, s);
    }
  const results = writeTables(dir, s);
  // The sweep's report (report.md/html with its figures of merit against each factor).
  if (results.length > 0 && opts.report !== false) await writeReport(dir);
  return { dir, ran, skipped, results, rerun };
}

/** A point's run options, but its stop: the same for a serial sweep and a point's worker thread. */
function pointOptions(
  s: LoadedSweep,
  p: SweepPoint,
  opts: SweepOptions,
  dir: string,
): Omit<RunOptions, 'stop' | 'lab'> {
  const planned = opts.planned?.(p);
  return {
    ...(planned ? { planned } : {}),
    scale: opts.scale,
    out: pointDir(dir, p),
    quiet: opts.quiet ?? false,
    sourceFile: s.experimentFile,
    runtime: opts.runtime ?? s.sweep.runtime,
    capacity: opts.capacity,
    events: opts.events ?? 'failures',
    report: opts.pointReports !== false,
    manifestExtra: {
      ...opts.manifestExtra,
      experimentFile: s.experimentFile,
      sweep: { name: s.sweep.name, file: s.file, point: p.index, values: p.values },
      overrides: [...opts.sets, ...Object.entries(p.values).map(([k, v]) => `${k}=${JSON.stringify(v)}`)],
    },
  };
}

/** The summaries of a complete point's runs, as its folder holds them. */
function pointRuns(dir: string, p: SweepPoint, repeat: number): RunSummary[] {
  return Array.from(
    { length: repeat },
    (_, i) =>
      JSON.parse(readFileSync(join(pointDir(dir, p), `run-${i + 1}`, 'summary.json'), 'utf8')) as RunSummary,
  );
}

export function describePoint(p: SweepPoint): string {
  return Object.entries(p.values)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(', ');
}

/** The complete points' results, and the three table files made from them. */
function writeTables(dir: string, s: LoadedSweep): PointResult[] {
  const plan = JSON.parse(readFileSync(join(dir, PLAN_FILE), 'utf8')) as { repeat: number };
  const results: PointResult[] = s.points
    .filter((p) => isPointComplete(pointDir(dir, p), plan.repeat))
    .map((p) => ({
      point: p,
      dir: `point-${p.index}`,
      runs: Array.from(
        { length: plan.repeat },
        (_, i) =>
          JSON.parse(
            readFileSync(join(pointDir(dir, p), `run-${i + 1}`, 'summary.json'), 'utf8'),
          ) as RunSummary,
      ),
      ...(isPointComplete(join(pointDir(dir, p), TWIN_DIR), plan.repeat)
        ? {
            twin: Array.from(
              { length: plan.repeat },
              (_, i) =>
                JSON.parse(
                  readFileSync(join(pointDir(dir, p), TWIN_DIR, `run-${i + 1}`, 'summary.json'), 'utf8'),
                ) as RunSummary,
            ),
          }
        : {}),
    }));
  // Beside a point's simulated twin, the Markov model's prediction (cached: the tables are rewritten after each point).
  const withCtmc = results.map((r) => {
    const first = r.runs[0];
    if (!r.twin || !first) return r;
    const c = ctmcBeside(s.experiments[r.point.index - 1]!, first.offeredPerS, first.recoveryDeadlineS);
    return {
      ...r,
      ctmc: {
        ...c,
        recoveryS: c.recoveryS === null ? null : round(c.recoveryS, 3),
        pRecoveredWithin: c.pRecoveredWithin === null ? null : round(c.pRecoveredWithin, 4),
      },
    };
  });
  writeJson(join(dir, 'sweep.json'), sweepTable(s.sweep.design, s.factors, withCtmc, s.sweep.name));
  writeFileSync(join(dir, 'sweep.csv'), sweepCsv(s.factors, withCtmc));
  writeFileSync(join(dir, 'sweep.md'), sweepMarkdown(s.sweep.name, s.sweep.design, s.factors, withCtmc));
  return withCtmc;
}

/** A new folder, or the folder of an earlier run of the very same sweep plan (to resume it). */
function sweepDir(name: string, opts: SweepOptions, plan: Record<string, unknown>): string {
  if (opts.out && existsSync(join(opts.out, PLAN_FILE))) {
    const before = JSON.parse(readFileSync(join(opts.out, PLAN_FILE), 'utf8')) as Record<string, unknown>;
    const same = (['design', 'runtime', 'repeat', 'scale', 'overrides', 'factors', 'points'] as const).every(
      (k) =>
        isDeepStrictEqual(
          JSON.parse(JSON.stringify(before[k] ?? null)),
          JSON.parse(JSON.stringify(plan[k] ?? null)),
        ),
    );
    if (!same)
      throw new BenchError(
        'E_USAGE',
        `${opts.out} holds a different sweep plan (${PLAN_FILE}); it can only be resumed with the same file, --set, --repeat and --scale`,
        'choose another --out to start a new sweep',
      );
    return opts.out;
  }
  if (opts.out && existsSync(opts.out) && existsSync(join(opts.out, 'summary.json')))
    throw new BenchError('E_USAGE', `${opts.out} already holds results of an experiment, not of a sweep`);
  return resultsDir(name, opts.out, opts.resultsRoot);
}
