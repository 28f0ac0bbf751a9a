import type { Clock } from '../../foundation/clock.js';
import { realProc, type ProcFiles } from '../lab/proc/machineLoad.js';
import {
  machineCores,
  machineSample,
  readMachine,
  type MachinePhase,
  type MachineReading,
  type MachineSample,
  type MachineState,
} from '../results/machineState.js';

/**
 * The machine's state during a lab run (results/machineState.ts): a reading before the
 * lab comes up, the start sample once it is up (over the lab's start), then one at each
 * phase's end (over that phase). Five passes over /proc in a run, none during a phase.
 */
export class MachineSampler {
  private last: MachineReading | undefined;
  private start: MachineSample | undefined;
  private readonly phases: Partial<Record<MachinePhase, MachineSample>> = {};
  private readonly cancels: (() => void)[] = [];

  /** `exclude`: the orchestrator's and the lab's processes (their descendants are left out too). */
  constructor(
    private readonly exclude: () => readonly number[],
    private readonly proc: ProcFiles = realProc,
    readonly cores: number = machineCores(),
  ) {}

  /** The first reading, before the lab starts. */
  begin(): void {
    this.last = this.read();
  }

  /** The start sample, over what happened since begin(); undefined where /proc cannot be read. */
  started(): MachineSample | undefined {
    const now = this.read();
    if (!now) return undefined;
    this.start = machineSample(this.last ?? now, now, null, this.excluded());
    this.last = now;
    return this.start;
  }

  /** A sample at each phase's end on the run's clock. */
  arm(clock: Clock, phases: readonly { readonly name: MachinePhase; readonly endMs: number }[]): void {
    for (const p of phases)
      this.cancels.push(clock.timer(p.endMs, () => this.phaseEnded(p.name, clock.now() / 1000)));
  }

  phaseEnded(name: MachinePhase, atS: number): void {
    const now = this.read();
    if (!now) return;
    if (this.last)
      this.phases[name] = machineSample(this.last, now, Math.round(atS * 1000) / 1000, this.excluded());
    this.last = now;
  }

  /** Stops; the state so far (undefined when the start sample was never taken). */
  stop(): MachineState | undefined {
    for (const c of this.cancels) c();
    this.cancels.length = 0;
    return this.state();
  }

  state(): MachineState | undefined {
    return this.start ? { cores: this.cores, start: this.start, phases: { ...this.phases } } : undefined;
  }

  /** A reading, or undefined where there is no /proc to read (not Linux): the run goes on without it. */
  private read(): MachineReading | undefined {
    try {
      return readMachine(this.proc);
    } catch {
      return undefined;
    }
  }

  private excluded(): number[] {
    return [process.pid, ...this.exclude()];
  }
}
