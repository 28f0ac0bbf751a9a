import type { MachineSample, MachineState, PriorityRecord } from '../results/machineState.js';
import { MACHINE_PHASES } from '../results/machineState.js';
import type { RunData } from './load.js';

/**
 * report.md's Machine section: what else the machine was doing beside each lab run (its
 * load at the start and at each phase's end, the steal time, the busiest other processes)
 * and the generator's priority, as the run recorded them (summary.json, manifest.json).
 * Null for a run that recorded none (a simulation, a run written before they were).
 */
export function machineLines(runs: readonly RunData[]): string[] | null {
  const recorded = runs.filter((r) => r.summary.machine !== undefined);
  if (recorded.length === 0) return null;
  const cores = recorded[0]!.summary.machine!.cores;
  const out = [
    `The machine's load beside the run, on ${cores} core${cores === 1 ? '' : 's'}: the load averages (/proc/loadavg) at the run's start and at each phase's end, the CPU time a hypervisor stole over each interval (/proc/stat) and the other processes that used the most CPU over it (the orchestrator and the lab's own processes left out). A load above the cores the run leaves free makes its schedule slip (docs/lab.md).`,
    '',
    '| run | when | load (1 min) | load (5 min) | steal | busiest other processes |',
    '|---|---|---|---|---|---|',
  ];
  for (const r of recorded) {
    const m: MachineState = r.summary.machine!;
    out.push(row(r.index, 'start', m.start));
    for (const p of MACHINE_PHASES) {
      const s = m.phases[p];
      if (s) out.push(row(r.index, `end of ${p}${s.atS === null ? '' : ` (${s.atS} s)`}`, s));
    }
  }
  out.push('');
  for (const r of recorded) {
    const p = (r.manifest as { priority?: PriorityRecord }).priority;
    if (p) out.push(`- run ${r.index}: ${describePriority(p)}`);
  }
  return out;
}

function row(run: number, when: string, s: MachineSample): string {
  return `| ${run} | ${when} | ${s.load1} | ${s.load5} | ${s.stealPct === null ? '–' : `${s.stealPct}%`} | ${s.busy.join(', ') || '–'} |`;
}

/** "the generator asked for high: granted nice -10; the lab's processes at niceness 0." */
export function describePriority(p: PriorityRecord): string {
  const g = p.generator;
  return (
    `the generator's threads asked for priority ${g.requested}: ` +
    (g.granted === null ? 'nothing granted' : `granted ${g.granted}`) +
    (g.refused === null ? '' : ` (refused: ${g.refused})`) +
    `; the lab's processes at niceness ${p.lab.niceness}.`
  );
}
