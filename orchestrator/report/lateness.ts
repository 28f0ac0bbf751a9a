import type { ReplayFigures } from '../analysis/lateness.js';
import { round } from '../../foundation/round.js';
import type { ReplayRecord } from '../results/lateness.js';
import type { RunData } from './load.js';

/**
 * The lateness replay of each run that had one (validity check 4, DESIGN.md §2): the
 * twin simulated with the intended and with the actual send times, side by side, and
 * whether lateness changed what the outcome rests on. Empty when no run was replayed.
 */
export function latenessLines(runs: readonly RunData[]): string[] {
  const replayed = runs.filter((r): r is RunData & { replay: ReplayRecord } => !!r.replay);
  if (replayed.length === 0) return [];
  const out = [
    `Lateness (check 4): each run's twin simulated with the intended send times and again with the actual ones the generator kept (same seed, the same work drawn per attempt; run-<i>/replay/). Lateness is harmless when both give the same outcome class and goodput and amplification after the trigger agree within 3 Poisson SDs of their counts' difference or 5% (whichever is wider), and recovery times within the ${replayed[0]!.replay.recoveryWindowS} s recovery window.`,
    '',
    '| run | send times | outcome | goodput after trigger | amplification | recovery time | lateness |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const { index, replay: r } of replayed) {
    const verdict =
      r.verdict === 'harmless'
        ? 'harmless'
        : r.verdict === 'changed'
          ? `**changed**: ${r.differences.join('; ')}`
          : `not judged: ${r.differences.join('; ')}`;
    out.push(row(index, 'intended', r.intended, ''), row(index, 'actual', r.actual, esc(verdict)));
  }
  out.push(
    '',
    `The replays took ${replayed.map((r) => `${round(r.replay.tookS, 1)} s`).join(', ')} (two simulations a run).`,
    '',
  );
  return out;
}

function row(index: number, which: string, f: ReplayFigures, verdict: string): string {
  const n = (v: number | null, unit: string): string => (v === null ? '–' : `${round(v, 3)}${unit}`);
  return `| ${index} | ${which} | ${f.outcome} | ${n(f.goodputPerS, '/s')} | ${n(f.amplification, '')} | ${n(f.recoveryTimeS, ' s')} | ${verdict} |`;
}

function esc(s: string): string {
  return s.replace(/\|/g, '\\|');
}
