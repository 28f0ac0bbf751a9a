import { existsSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { aggregateRuns } from '../analysis/aggregate.js';
import type { RunSummary } from '../analysis/summary.js';
import { isValid } from '../analysis/tally.js';
import type { Runtime } from '../lab/runtimes.js';
import { writeJson } from '../results/files.js';
import { writeReport } from '../report/writeReport.js';
import { runOnce, type RunContext } from '../run/runOnce.js';
import { StatusLine } from '../run/status.js';
import { planRun, type PlannedCapacity } from '../spec/plan.js';
import type { Experiment } from '../spec/schema.js';
import { Journal } from '../trigger/journal.js';
import type { EventsMode } from '../../bench/record/eventLog.js';

/**
 * `metabench sweep … --rerun-invalid`: a complete point's invalid runs are run again, one
 * at a time and each with its own seed (run i is run i again), until it comes out valid or
 * its re-runs reach the cap. Nothing measured is lost: an invalid run's folder is kept
 * beside the point's runs as run-<i>.invalid-<n> (no report reads it as a run), and the
 * point's summary.json and report are made again from run-1 … run-<repeat>. The same code
 * for every runtime: a lab point is re-run on its lab, a simulated one in virtual time.
 */

/** The default cap: re-runs of one invalid run per `--rerun-invalid` (documented in docs/commands.md). */
export const DEFAULT_MAX_RERUNS = 3;

/** The 1-based indices of a complete point's invalid runs. */
export function invalidRuns(pointDir: string, repeat: number): number[] {
  const out: number[] = [];
  for (let i = 1; i <= repeat; i++) if (!isValid(readSummary(pointDir, i))) out.push(i);
  return out;
}

/** Where an invalid run's folder is kept: run-<i>.invalid-<n>, n the first number free. */
export function keptRunDir(pointDir: string, run: number): string {
  let n = 1;
  while (existsSync(join(pointDir, `run-${run}.invalid-${n}`))) n++;
  return join(pointDir, `run-${run}.invalid-${n}`);
}

export interface RerunOptions {
  readonly scale: number;
  readonly sourceFile?: string | undefined;
  readonly runtime: Runtime;
  readonly lab?: Pick<RunContext, 'docker' | 'pin'>;
  readonly events?: EventsMode | undefined;
  readonly manifestExtra?: Record<string, unknown>;
  readonly stop: AbortSignal;
  readonly maxReruns: number;
  readonly quiet?: boolean;
  /** Write the point's report again (default true). */
  readonly report?: boolean;
  /** How `% capacity` resolves for a run whose manifest recorded no capacity (an older folder): as the sweep resolves it. */
  readonly capacity?: Omit<Parameters<typeof planRun>[1], 'scale' | 'run' | 'sourceFile'>;
}

export interface PointRerun {
  /** Each invalid run re-run: how many times, and whether it is now valid. */
  readonly runs: readonly { readonly run: number; readonly reruns: number; readonly valid: boolean }[];
}

/**
 * Re-runs the invalid runs of the complete point in `pointDir` (`e` at `repeat` runs), at the
 * capacity each run recorded (so it offers the rate it did), then writes the point's
 * summary.json and (unless opts.report is false) report again. Returns what it did; an
 * empty list when every run was valid.
 */
export async function rerunInvalidRuns(
  e: Experiment,
  pointDir: string,
  repeat: number,
  opts: RerunOptions,
): Promise<PointRerun> {
  const todo = invalidRuns(pointDir, repeat);
  if (todo.length === 0) return { runs: [] };
  const journal = new Journal();
  const status = new StatusLine(process.stderr, opts.quiet ?? false);
  const done: { run: number; reruns: number; valid: boolean }[] = [];
  for (const i of todo) {
    let reruns = 0;
    let valid = false;
    while (!valid && reruns < opts.maxReruns && !opts.stop.aborted) {
      const dir = join(pointDir, `run-${i}`);
      const planned = recordedCapacity(dir);
      const kept = keptRunDir(pointDir, i);
      renameSync(dir, kept);
      reruns++;
      status.say(`  run ${i}: invalid; re-run ${reruns} of at most ${opts.maxReruns} (kept as ${kept})`);
      const plan = planRun(e, {
        scale: opts.scale,
        run: i,
        sourceFile: opts.sourceFile,
        ...(planned ? { planned } : opts.capacity),
      });
      const s = await runOnce(plan, dir, {
        journal,
        status,
        stop: opts.stop,
        runtime: opts.runtime,
        ...(opts.events ? { events: opts.events } : {}),
        ...opts.lab,
        manifestExtra: {
          ...opts.manifestExtra,
          rerun: { of: `run-${i}`, reruns, kept: kept.slice(pointDir.length + 1) },
        },
      });
      valid = isValid(s);
      status.say(`  run ${i}, re-run ${reruns}: ${s.outcome.toUpperCase()}: ${s.outcomeReason}`);
    }
    done.push({ run: i, reruns, valid });
  }
  // The point again, from its runs as they now are.
  const runs = Array.from({ length: repeat }, (_, k) => readSummary(pointDir, k + 1));
  writeJson(join(pointDir, 'summary.json'), runs.length > 1 ? aggregateRuns(runs) : runs[0]);
  if (opts.report !== false) await writeReport(pointDir);
  return { runs: done };
}

function readSummary(pointDir: string, run: number): RunSummary {
  return JSON.parse(readFileSync(join(pointDir, `run-${run}`, 'summary.json'), 'utf8')) as RunSummary;
}

/** The capacity a run's `% capacity` resolved against, as its manifest recorded it (absent in an older folder). */
function recordedCapacity(runDir: string): PlannedCapacity | undefined {
  const file = join(runDir, 'manifest.json');
  if (!existsSync(file)) return undefined;
  const c = (JSON.parse(readFileSync(file, 'utf8')) as { capacity?: PlannedCapacity }).capacity;
  return c && c.usedPerS !== null && c.usedPerS > 0 ? c : undefined;
}
