import os from 'node:os';
import {
  busiestProcesses,
  parseCpuTimes,
  parseLoadavg,
  realProc,
  snapshotProcesses,
  stealPct,
  type CpuTimes,
  type ProcFiles,
  type ProcSnapshot,
} from '../lab/proc/machineLoad.js';
import type { PriorityGrant } from '../lab/proc/priority.js';

/**
 * What else the machine was doing during a lab run (issue 31): the load average, the CPU
 * time stolen by a hypervisor and the busiest other processes, at the run's start and at
 * each phase's end. A run's schedule lag depends on them, so manifest.json and
 * summary.json both carry them under `machine` (the simulation, which does not depend on
 * the machine, records none). The shape is read by the invalid run's remedies.
 */

export type MachinePhase = 'warmup' | 'baseline' | 'trigger' | 'observe';
export const MACHINE_PHASES: readonly MachinePhase[] = ['warmup', 'baseline', 'trigger', 'observe'];

export interface MachineSample {
  /** When it was taken, s on the run's clock; null for the start (taken before the clock starts). */
  readonly atS: number | null;
  readonly load1: number;
  readonly load5: number;
  /** The CPU time stolen by the hypervisor over the interval, %; null where the kernel does not count it. */
  readonly stealPct: number | null;
  /** The top 3 other processes by CPU over the interval, names only, excluding the orchestrator and the lab's own processes. */
  readonly busy: string[];
}

export interface MachineState {
  readonly cores: number;
  readonly start: MachineSample;
  /** One sample at each phase's end the run reached (over that phase). */
  readonly phases: Partial<Record<MachinePhase, MachineSample>>;
}

/** What manifest.json records of the scheduling priority: the generator's threads', and the lab's processes' niceness. */
export interface PriorityRecord {
  readonly generator: PriorityGrant;
  readonly lab: { readonly niceness: number };
}

/** One reading of the machine: the load average, the CPU times and every process's CPU so far. */
export interface MachineReading {
  readonly load1: number;
  readonly load5: number;
  readonly cpu: CpuTimes | null;
  readonly procs: ProcSnapshot;
}

export function readMachine(proc: ProcFiles = realProc): MachineReading {
  const load = parseLoadavg(proc.read('/proc/loadavg') ?? '');
  const stat = proc.read('/proc/stat');
  return {
    load1: load.load1,
    load5: load.load5,
    cpu: stat ? parseCpuTimes(stat) : null,
    procs: snapshotProcesses(proc),
  };
}

/** The sample over [before, after]: the load at its end, the steal and the busiest processes over it. */
export function machineSample(
  before: MachineReading,
  after: MachineReading,
  atS: number | null,
  exclude: Iterable<number>,
): MachineSample {
  const steal = before.cpu && after.cpu ? stealPct(before.cpu, after.cpu) : null;
  return {
    atS,
    load1: after.load1,
    load5: after.load5,
    stealPct: steal === null ? null : Math.round(steal * 100) / 100,
    busy: busiestProcesses(before.procs, after.procs, exclude),
  };
}

/** The cores a run's load competes for: every CPU the machine has (not only those this process is pinned to). */
export function machineCores(): number {
  return os.cpus().length;
}
