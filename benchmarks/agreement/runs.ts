import { rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { round } from '../../foundation/round.js';
import { suiteScale } from '../../orchestrator/model/agreement.js';
import { simulate } from '../../orchestrator/model/simulate.js';
import { gitRevision } from '../../orchestrator/results/manifest.js';
import { runExperiment } from '../../orchestrator/run/runExperiment.js';
import { runCapacity } from '../../orchestrator/run/runCapacity.js';
import { loadExperimentFile } from '../../orchestrator/spec/load.js';
import { planRun } from '../../orchestrator/spec/plan.js';
import { sideSummary, type SideResult } from './rows.js';

/**
 * The runs of `npm run agreement`: each catalogue experiment once, at the reproduction
 * suite's scale, with its file's seed, one repetition, nominal capacity.
 */

/** The experiment `file` (relative to `root`) as the agreement runs it: one repetition. */
function experiment(root: string, file: string): ReturnType<typeof loadExperimentFile> {
  return { ...loadExperimentFile(join(root, file)), repeat: 1 };
}

/** What a side measures around its run: when it started, the machine's load then, how long it took. */
async function timed(run: () => Promise<Pick<SideResult, 'summary' | 'gitRevision'>>): Promise<SideResult> {
  const startedAt = new Date().toISOString();
  const loadAvg1 = round(loadavg()[0]!, 2);
  const t0 = performance.now();
  const wallS = (): number => round((performance.now() - t0) / 1000, 1);
  try {
    const r = await run();
    return { startedAt, loadAvg1, wallS: wallS(), ...r, error: null };
  } catch (err) {
    const error = err instanceof Error ? err.message : String(err);
    return { startedAt, loadAvg1, wallS: wallS(), summary: null, error };
  }
}

/**
 * One side of one experiment through the same runExperiment as `metabench run`, into
 * `out` (emptied first): the lab (runtime local) or the simulated twin (sim). A test
 * passes runtime 'sim' for the lab side: the run folder and its record are the same.
 */
export async function runSide(
  root: string,
  file: string,
  out: string,
  runtime: 'local' | 'sim',
): Promise<SideResult> {
  rmSync(out, { recursive: true, force: true });
  return timed(async () => {
    const e = experiment(root, file);
    const r = await runExperiment(e, {
      scale: suiteScale(e, join(root, file)),
      out,
      quiet: true,
      stop: new AbortController().signal,
      sourceFile: join(root, file),
      runtime,
      capacity: 'nominal',
      manifestExtra: { command: ['agreement'], experimentFile: file },
    });
    return { summary: sideSummary(r.runs[0]!), gitRevision: gitRevision() };
  });
}

/**
 * The simulated side of `file` by this revision's simulator, in memory (no folder, no
 * report: a second or so each): the same plan and the same executeRun as runSide's
 * `--runtime sim`, so the same summary (the agreement tests check both give one table).
 */
export async function simulateSide(root: string, file: string): Promise<SideResult> {
  return timed(async () => {
    const e = experiment(root, file);
    const src = join(root, file);
    const plan = planRun(e, {
      scale: suiteScale(e, src),
      run: 1,
      sourceFile: src,
      ...runCapacity(e, 'sim', { capacity: 'nominal' }),
    });
    return { summary: sideSummary((await simulate(plan)).summary), gitRevision: gitRevision() };
  });
}

/**
 * How the plan this revision makes of `file` differs from `recorded` (a lab run's record's
 * plan) in what the run did: its scale or its experiment; null when they are the same.
 */
export function planChange(
  root: string,
  file: string,
  recorded: { scale: number; experiment: unknown },
): string | null {
  const e = experiment(root, file);
  const scale = suiteScale(e, join(root, file));
  if (scale !== recorded.scale) return `the lab ran it at scale ${recorded.scale}, this revision at ${scale}`;
  if (JSON.stringify(e) !== JSON.stringify(recorded.experiment))
    return `${file} changed since the lab ran it`;
  return null;
}
