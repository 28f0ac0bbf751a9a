import { InvalidArgumentError } from 'commander';
import { BenchError } from '../../foundation/errors.js';
import type { Runtime } from '../lab/runtimes.js';
import type { MeasuredCapacity } from '../spec/plan.js';
import type { Experiment } from '../spec/schema.js';
import { findCalibration, measuredCapacity } from './store.js';

/**
 * Which capacity `% capacity` rates resolve against (`--capacity` on run and sweep):
 *   auto      the measured one when this lab configuration was calibrated on this
 *             machine (metabench calibrate), else the nominal one (the default);
 *   nominal   always the lab's declared capacity (workers / mean work);
 *   measured  the measured one, and an error when there is none.
 */
export const CAPACITY_MODES = ['auto', 'nominal', 'measured'] as const;
export type CapacityMode = (typeof CAPACITY_MODES)[number];

export function parseCapacityMode(v: string): CapacityMode {
  if (!(CAPACITY_MODES as readonly string[]).includes(v))
    throw new InvalidArgumentError(`--capacity takes ${CAPACITY_MODES.join(', ')} (got "${v}")`);
  return v as CapacityMode;
}

/** The planRun options that choose the capacity: the measured one, or why the nominal one. */
export interface CapacityChoice {
  readonly capacity: MeasuredCapacity | null;
  readonly nominalWhy?: string;
}

/** The measured capacity a run of `e` uses (null: the nominal one, and why). */
export function capacityFor(
  e: Experiment,
  runtime: Runtime,
  mode: CapacityMode = 'auto',
  storeRoot?: string,
): CapacityChoice {
  if (mode === 'nominal') return { capacity: null, nominalWhy: '--capacity nominal' };
  const entry = findCalibration(e, runtime, storeRoot !== undefined ? { root: storeRoot } : {});
  if (entry) return { capacity: measuredCapacity(entry) };
  if (mode === 'measured')
    throw new BenchError(
      'E_USAGE',
      `--capacity measured: ${e.name}'s lab configuration has no calibration on this machine`,
      'run `metabench calibrate <file>` with the same lab (and --set) first',
    );
  return { capacity: null, nominalWhy: 'no calibration of this lab on this machine' };
}
