/**
 * What each benchmark measured against its goal, for `npm run bench`'s summary
 * (benchmarks/summary.ts). A benchmark writes its figures to
 * benchmarks/results/goals/<benchmark>.json, replacing the previous run's; the summary
 * puts every benchmark's beside its goal, met or not, with the machine and the load
 * average each ran under: a figure taken on a busy machine says so.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeMachine } from '../orchestrator/results/manifest.js';

export const RESULTS_DIR = fileURLToPath(new URL('../../benchmarks/results/', import.meta.url));
const GOALS_DIR = join(RESULTS_DIR, 'goals');

export interface Goal {
  /** What was measured, e.g. "highest open-loop Poisson rate held". */
  readonly figure: string;
  /** The measured figure, as a person reads it ("30 000/s"). */
  readonly measured: string;
  /** The goal, as the issue states it (">= 40 000/s"); "–" for a figure with none. */
  readonly goal: string;
  /** Whether the goal was met; null for a figure without a goal or one that was not measured. */
  readonly met: boolean | null;
}

export interface GoalReport {
  readonly benchmark: string;
  readonly date: string;
  readonly machine: ReturnType<typeof describeMachine>;
  /** The 1, 5 and 15-minute load averages when the benchmark started. */
  readonly loadAverage: readonly number[];
  readonly goals: readonly Goal[];
}

/** The load average to pass to writeGoals: read it before the benchmark loads the machine. */
export function loadNow(): number[] {
  return loadavg().map((x) => Math.round(x * 100) / 100);
}

export function writeGoals(
  benchmark: string,
  loadAverage: readonly number[],
  goals: readonly Goal[],
  dir = GOALS_DIR,
): string {
  const report: GoalReport = {
    benchmark,
    date: new Date().toISOString(),
    machine: describeMachine(),
    loadAverage,
    goals,
  };
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${benchmark}.json`);
  writeFileSync(file, JSON.stringify(report, null, 2) + '\n');
  return file;
}

export function readGoals(dir = GOALS_DIR): GoalReport[] {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith('.json'));
  } catch {
    return [];
  }
  return names.sort().map((n) => JSON.parse(readFileSync(join(dir, n), 'utf8')) as GoalReport);
}

const verdict = (met: boolean | null): string => (met === null ? '–' : met ? 'met' : '**not met**');
/** A table cell: a `|` in a figure's text would split it. */
const cell = (s: string): string => s.replace(/\|/g, '\\|');

/** The summary as Markdown: one table of every figure beside its goal, and where each was measured. */
export function renderSummary(reports: readonly GoalReport[], now = new Date()): string {
  const lines = [`# Benchmark summary, ${now.toISOString().slice(0, 10)}`, ''];
  if (reports.length === 0) return [...lines, 'No benchmark has written its figures yet.', ''].join('\n');
  const machines = new Set(
    reports.map(
      (r) =>
        `${r.machine.cpuModel}, ${r.machine.cpus} cores, ${(r.machine.memoryBytes / 2 ** 30).toFixed(1)} GiB, ${r.machine.os}, Node ${r.machine.node}`,
    ),
  );
  for (const m of machines) lines.push(`Machine: ${m}.`);
  lines.push('');
  lines.push('| benchmark | figure | measured | goal | met |', '|---|---|---|---|---|');
  for (const r of reports)
    for (const g of r.goals)
      lines.push(
        `| ${cell(r.benchmark)} | ${cell(g.figure)} | ${cell(g.measured)} | ${cell(g.goal)} | ${verdict(g.met)} |`,
      );
  const all = reports.flatMap((r) => r.goals).filter((g) => g.met !== null);
  lines.push('', `${all.filter((g) => g.met).length} of ${all.length} goals met.`, '');
  lines.push('| benchmark | run at | load average (1, 5, 15 min) before it |', '|---|---|---|');
  for (const r of reports)
    lines.push(
      `| ${r.benchmark} | ${r.date.slice(0, 16).replace('T', ' ')} UTC | ${r.loadAverage.join(', ')} |`,
    );
  lines.push(
    '',
    'Each benchmark also writes its own file here with the full figures (benchmarks/results/<benchmark>-<date>.md).',
    '',
  );
  return lines.join('\n');
}
