import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BenchError } from '../../foundation/errors.js';
import { parseSet, type Override } from '../../foundation/overrides.js';
import type { Runtime } from '../lab/runtimes.js';
import { loadSweepFile, type LoadedSweep } from '../spec/sweep.js';
import { describeOverrides } from './setOption.js';

/** What `sweep --resume DIR` reads of DIR/sweep-plan.json (orchestrator/sweep/runSweep.ts writes it). */
interface RecordedPlan {
  readonly file?: string;
  readonly runtime?: Runtime;
  readonly repeat?: number;
  readonly scale?: number;
  readonly overrides?: readonly string[];
}

export interface ResumedSweep {
  readonly sweep: LoadedSweep;
  /** The plan's scale, repetitions and runtime: the command line's win where given (the plan check then says whether they match). */
  readonly scale: number;
  readonly repeat: number | undefined;
  readonly runtime: Runtime | undefined;
  /** The overrides as recorded in each point's manifest. */
  readonly sets: readonly string[];
}

/**
 * The sweep in `dir`, to resume it: the sweep file given, or else the one its plan names,
 * with the `--set` overrides it recorded. A folder without a plan is refused (nothing to resume).
 */
export function resumedSweep(dir: string, file: string | undefined, sets: readonly Override[]): ResumedSweep {
  const planFile = join(dir, 'sweep-plan.json');
  if (!existsSync(planFile))
    throw new BenchError(
      'E_USAGE',
      `${dir} holds no sweep to resume (no sweep-plan.json)`,
      'give the folder a `metabench sweep` wrote',
    );
  const plan = JSON.parse(readFileSync(planFile, 'utf8')) as RecordedPlan;
  if (file === undefined && sets.length > 0)
    throw new BenchError(
      'E_USAGE',
      '--set with --resume and no sweep file: the resumed sweep keeps the overrides it recorded',
    );
  const from = file ?? plan.file;
  if (!from)
    throw new BenchError(
      'E_USAGE',
      `${planFile} names no sweep file: give it (metabench sweep FILE --resume ${dir})`,
    );
  const recorded = file === undefined ? (plan.overrides ?? []).map((t) => reparse(t, planFile)) : [...sets];
  return {
    sweep: loadSweepFile(from, recorded),
    scale: plan.scale ?? 1,
    repeat: plan.repeat,
    runtime: plan.runtime,
    sets: describeOverrides(recorded),
  };
}

function reparse(text: string, planFile: string): Override {
  const r = parseSet(text);
  if (!r.ok) throw new BenchError('E_USAGE', `${planFile}: overrides: ${r.message}`);
  return r.value;
}
