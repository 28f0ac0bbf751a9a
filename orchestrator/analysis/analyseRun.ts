import type { ClassesSummary } from './classes.js';
import type { MachineState } from '../results/machineState.js';
import { summarizeRun, type RunSummary, type SummaryInput } from './summary.js';

/**
 * What a run recorded, all its analysis needs (DESIGN.md §2 "Analysis from the record"):
 * the resolved plan, the Recorder's series and windows, the scrapes, the triggers as they
 * happened, and the per-class description the event stream gave. results/record.ts
 * writes it beside the run and reads it back; a field added here is written and read
 * with the rest.
 */
export interface RunRecord extends SummaryInput {
  /** Per request class and phase, as measured from the events (a mix only; its windows are the plan's phases). */
  readonly classes?: ClassesSummary;
  /** A lab run's machine: its load at the start and each phase's end (absent in the simulation). */
  readonly machine?: MachineState;
}

/**
 * summary.json of one run, from its record alone: what `metabench run` writes once the
 * run is recorded, and what `metabench report` recomputes (with its --set overrides
 * applied to the plan), so the two cannot drift.
 */
export function analyseRun(r: RunRecord): RunSummary {
  const summary = summarizeRun(r);
  // After the run's own figures, in this order: its classes, then its machine.
  return {
    ...summary,
    ...(r.classes ? { classes: r.classes } : {}),
    ...(r.machine ? { machine: r.machine } : {}),
  };
}
