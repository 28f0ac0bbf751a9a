import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Runtime } from '../lab/runtimes.js';
import { describeMachine } from '../results/manifest.js';
import type { MeasuredCapacity } from '../spec/plan.js';
import type { Experiment } from '../spec/schema.js';
import { stateDir } from '../trigger/journal.js';

/**
 * The calibration store: the capacity `metabench calibrate` measured, kept with the
 * machine it was measured on, so later runs of an experiment with the same lab
 * configuration on the same machine resolve `% capacity` against it.
 *
 *   <state>/calibrations/<machine id>/<lab key>.json
 *
 * <state> is $METABENCH_STATE_DIR, else $XDG_STATE_HOME/metabench, else
 * ~/.local/state/metabench (the fault journal's directory). A capacity belongs to a
 * machine, not to a checkout, so it lives there rather than beside the experiment.
 *
 * - The lab key hashes what decides the capacity: the runtime, the whole resolved `lab`
 *   section (workers, work, cost classes, mitigations, request timeout, cache, db) and
 *   the workload (the arrival law and the request mix, whose classes cost differently).
 *   Units are resolved first, so `1s` and `1000ms` are the same lab. Neither the load's
 *   rate shape nor the client is part of it: they are what a run varies around capacity.
 * - The machine id hashes the hostname, CPU model, core count, memory and platform/arch.
 *   A different Node or kernel still matches; the entry records both, and a run using
 *   it says what differs.
 *
 * A new calibration of the same lab on the same machine replaces the file (the earlier
 * calibration's results folder keeps its figures).
 */
export interface CalibrationEntry {
  readonly version: 1;
  readonly labKey: string;
  readonly machineId: string;
  /** What the lab key hashes, in clear, to check a match and to show. */
  readonly lab: LabIdentity;
  readonly machine: ReturnType<typeof describeMachine>;
  readonly measuredAt: string;
  /** The saturation point: the capacity `% capacity` resolves against. */
  readonly capacityPerS: number;
  readonly goodputAtSaturationPerS: number | null;
  /** The experiment and results folder of the calibration. */
  readonly experiment: string;
  readonly experimentFile: string | null;
  readonly resultsDir: string;
  readonly scale: number;
}

export interface LabIdentity {
  readonly runtime: Runtime;
  readonly lab: Experiment['lab'];
  /** Your own system (system:), when the experiment declares one instead of the lab. */
  readonly system?: Experiment['system'];
  readonly workload: {
    readonly arrival: Experiment['load']['arrival'];
    readonly mix: Experiment['load']['mix'] | null;
  };
}

export function labIdentity(e: Experiment, runtime: Runtime): LabIdentity {
  // The key of a built-in lab hashes exactly what it always did (no `system` field).
  return {
    runtime,
    lab: e.lab,
    ...(e.system ? { system: e.system } : {}),
    workload: { arrival: e.load.arrival, mix: e.load.mix ?? null },
  };
}

export function labKey(e: Experiment, runtime: Runtime): string {
  return hash(labIdentity(e, runtime));
}

type Machine = ReturnType<typeof describeMachine>;

export function machineId(m: Machine = describeMachine()): string {
  return hash({
    hostname: m.hostname,
    cpuModel: m.cpuModel,
    cpus: m.cpus,
    memoryBytes: m.memoryBytes,
    platform: m.os.replace(/^.*\((.*)\)$/, '$1'),
  });
}

export function calibrationsDir(root = stateDir()): string {
  return join(root, 'calibrations');
}

export function calibrationFile(e: Experiment, runtime: Runtime, opts: StoreOptions = {}): string {
  return join(calibrationsDir(opts.root), machineId(opts.machine), `${labKey(e, runtime)}.json`);
}

export interface StoreOptions {
  /** The state directory (default: stateDir()). */
  readonly root?: string;
  /** The machine (default: this one). */
  readonly machine?: Machine;
}

/** Stores a calibration (atomically: a reader never sees half a file); returns the file. */
export function saveCalibration(
  e: Experiment,
  runtime: Runtime,
  result: {
    capacityPerS: number;
    goodputAtSaturationPerS: number | null;
    experimentFile: string | null;
    resultsDir: string;
    scale: number;
    measuredAt?: Date;
  },
  opts: StoreOptions = {},
): string {
  const machine = opts.machine ?? describeMachine();
  const file = calibrationFile(e, runtime, { ...opts, machine });
  const entry: CalibrationEntry = {
    version: 1,
    labKey: labKey(e, runtime),
    machineId: machineId(machine),
    lab: labIdentity(e, runtime),
    machine,
    measuredAt: (result.measuredAt ?? new Date()).toISOString(),
    capacityPerS: result.capacityPerS,
    goodputAtSaturationPerS: result.goodputAtSaturationPerS,
    experiment: e.name,
    experimentFile: result.experimentFile === null ? null : resolve(result.experimentFile),
    resultsDir: resolve(result.resultsDir),
    scale: result.scale,
  };
  mkdirSync(join(file, '..'), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(entry, null, 2) + '\n');
  renameSync(tmp, file);
  return file;
}

/**
 * The stored calibration of this experiment's lab configuration on this machine, or
 * null. An unreadable or mismatching file (a hash collision, a hand edit) is ignored.
 */
export function findCalibration(
  e: Experiment,
  runtime: Runtime,
  opts: StoreOptions = {},
): (CalibrationEntry & { file: string }) | null {
  const machine = opts.machine ?? describeMachine();
  const file = calibrationFile(e, runtime, { ...opts, machine });
  if (!existsSync(file)) return null;
  let entry: CalibrationEntry;
  try {
    entry = JSON.parse(readFileSync(file, 'utf8')) as CalibrationEntry;
  } catch {
    return null;
  }
  if (
    entry.version !== 1 ||
    !(entry.capacityPerS > 0) ||
    canonical(entry.lab) !== canonical(labIdentity(e, runtime)) ||
    entry.machineId !== machineId(machine)
  )
    return null;
  return { ...entry, file };
}

/** A stored calibration as the plan takes it, saying what differs from when it was measured. */
export function measuredCapacity(
  entry: CalibrationEntry & { file: string },
  machine: Machine = describeMachine(),
): MeasuredCapacity {
  const m = entry.machine;
  const diffs = [
    ...(m.node !== machine.node ? [`Node ${m.node} then, ${machine.node} now`] : []),
    ...(m.os !== machine.os ? [`OS ${m.os} then, ${machine.os} now`] : []),
  ];
  return {
    perS: entry.capacityPerS,
    file: entry.file,
    measuredAt: entry.measuredAt,
    resultsDir: entry.resultsDir,
    machine: `${m.hostname}: ${m.cpuModel}, ${m.cpus} cores, ${(m.memoryBytes / 2 ** 30).toFixed(1)} GiB, ${m.os}, Node ${m.node}`,
    ...(diffs.length ? { note: diffs.join('; ') } : {}),
  };
}

/** JSON with sorted keys, so equal values hash equal whatever their key order. */
export function canonical(x: unknown): string {
  return JSON.stringify(x, (_k, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : v,
  );
}

function hash(x: unknown): string {
  return createHash('sha256').update(canonical(x)).digest('hex').slice(0, 16);
}
