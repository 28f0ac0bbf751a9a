import { readFileSync } from 'node:fs';
import { parseExperiment } from '../../orchestrator/spec/load.js';
import type { Override } from '../../foundation/overrides.js';
import { parseSet } from '../../foundation/overrides.js';
import { planRun, type RunPlan } from '../../orchestrator/spec/plan.js';

/** A run plan from experiment YAML text. */
export function planOf(yaml: string, opts: { scale?: number; set?: readonly string[] } = {}): RunPlan {
  const overrides: Override[] = (opts.set ?? []).map((t) => {
    const r = parseSet(t);
    if (!r.ok) throw new Error(r.message);
    return r.value;
  });
  return planRun(parseExperiment(yaml, 'inline.yaml', overrides), { scale: opts.scale ?? 1, run: 1 });
}

/** A run plan from one of the repository's experiment files (experiments/NAME.yaml). */
export function planOfFile(name: string, opts: { scale?: number; set?: readonly string[] } = {}): RunPlan {
  const text = readFileSync(new URL(`../../../experiments/${name}.yaml`, import.meta.url), 'utf8');
  return planOf(text, opts);
}
