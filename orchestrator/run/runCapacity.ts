import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BenchError } from '../../foundation/errors.js';
import { capacityFor, type CapacityMode } from '../calibrate/capacity.js';
import type { Runtime } from '../lab/runtimes.js';
import type { PlannedCapacity } from '../spec/plan.js';
import type { Experiment } from '../spec/schema.js';

// The capacity a run resolves `% capacity` against: apart from runExperiment, so what
// decides where a simulated run goes (onThread.ts) loads without the run's code.

/**
 * The capacity a lab run in `dir` used, as its run-1/manifest.json recorded it, for its
 * simulated twin: the twin then resolves `% capacity` against the same capacity, so it
 * offers the rate the lab actually ran (not one resolved again, for the simulation's
 * runtime, from a calibration store that may have changed).
 */
export function twinCapacity(dir: string): PlannedCapacity {
  const file = join(dir, 'run-1', 'manifest.json');
  const m = JSON.parse(readFileSync(file, 'utf8')) as { capacity?: PlannedCapacity };
  const c = m.capacity;
  if (!c || c.usedPerS === null || !(c.usedPerS > 0))
    throw new BenchError('E_USAGE', `${file}: capacity.usedPerS: missing (the lab run recorded no capacity)`);
  return { ...c, from: `the lab run's (${dir}): ${c.from}` };
}

/** The capacity `% capacity` resolves against for `e` on `runtime`: the one given as it is (opts.planned), else per opts.capacity. */
export function runCapacity(
  e: Experiment,
  runtime: Runtime,
  opts: { readonly planned?: PlannedCapacity | undefined; readonly capacity?: CapacityMode | undefined },
): ReturnType<typeof capacityFor> | { planned: PlannedCapacity } {
  return opts.planned ? { planned: opts.planned } : capacityFor(e, runtime, opts.capacity);
}
