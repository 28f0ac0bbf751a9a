import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { RunSummary } from '../../orchestrator/analysis/summary.js';
import type { describeMachine } from '../../orchestrator/results/manifest.js';

/**
 * What `npm run agreement` keeps of each run (results/agreement/rows.json while it runs;
 * the committed store's store.json after: benchmarks/agreement/store.ts).
 */

export type Side = 'lab' | 'sim';

/** The figures of a run's summary the agreement shows. */
export type SideSummary = Pick<
  RunSummary,
  | 'outcome'
  | 'outcomeReason'
  | 'recoveryTimeS'
  | 'validity'
  | 'baseline'
  | 'afterTrigger'
  | 'offeredPerS'
  | 'lateSends'
  | 'sustainingEffect'
  | 'projectedRecoveryS'
>;

/** One run of one side. */
export interface SideResult {
  readonly startedAt: string;
  readonly loadAvg1: number;
  readonly wallS: number;
  readonly summary: SideSummary | null;
  readonly error: string | null;
  /** The metabench revision that ran it (its manifest's gitRevision; "-dirty" with uncommitted changes). */
  readonly gitRevision?: string | null;
}

export interface Row {
  readonly name: string;
  readonly file: string;
  readonly cannotModel: string | null;
  lab?: SideResult;
  sim?: SideResult;
  /** Earlier lab runs of this experiment, replaced by a rerun (kept: they are part of the record). */
  earlierLab?: SideResult[];
  /**
   * How the experiment file of this revision differs from the one the lab ran (its
   * record's plan), or absent when they are the same: the simulated twin then runs
   * another experiment than the lab did.
   */
  labPlanChanged?: string;
}

/** rows.json: every row of a full run and its reruns. */
export interface Rows {
  machine: ReturnType<typeof describeMachine>;
  startedAt: string;
  loadAvgAtStart: number[];
  rows: Record<string, Row>;
}

/** The figures of `s` the agreement keeps, as plain JSON (what rows.json and store.json hold). */
export function sideSummary(s: RunSummary): SideSummary {
  const picked: SideSummary = {
    outcome: s.outcome,
    outcomeReason: s.outcomeReason,
    recoveryTimeS: s.recoveryTimeS,
    validity: s.validity,
    baseline: s.baseline,
    afterTrigger: s.afterTrigger,
    offeredPerS: s.offeredPerS,
    lateSends: s.lateSends,
    sustainingEffect: s.sustainingEffect,
    projectedRecoveryS: s.projectedRecoveryS,
  };
  // As a file holds it (no undefined fields): compared with what a file holds.
  return JSON.parse(JSON.stringify(picked)) as SideSummary;
}

/** The catalogue under `root`: experiments/*.yaml, not the sweep files, by name. */
export function catalogue(root: string): string[] {
  return readdirSync(join(root, 'experiments'))
    .filter((f) => f.endsWith('.yaml') && !f.endsWith('.sweep.yaml'))
    .sort()
    .map((f) => `experiments/${f}`);
}
