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

/** How far before its end a phase still counts as reached when the run stops (the driver's last send tick). */
const END_SLACK_MS = 250;

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
  private armed: { clock: Clock; phases: readonly { name: MachinePhase; endMs: number }[] } | undefined;

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
    this.armed = { clock, phases };
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

  /**
   * Stops; the state so far (undefined when the start sample was never taken). The last
   * phase ends where the driver stops, often before its timer fires: a phase whose end
   * is within END_SLACK_MS of now is sampled now; one the run did not reach, never.
   */
  stop(): MachineState | undefined {
    for (const c of this.cancels) c();
    this.cancels.length = 0;
    if (this.armed && this.start) {
      const nowMs = this.armed.clock.now();
      for (const p of this.armed.phases)
        if (this.phases[p.name] === undefined && p.endMs <= nowMs + END_SLACK_MS)
          this.phaseEnded(p.name, nowMs / 1000);
    }
    this.armed = undefined;
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
