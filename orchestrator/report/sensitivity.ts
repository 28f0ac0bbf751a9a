import {
  effectiveWindowS,
  ownBelowNoiseFloor,
  pct,
  sensitivityView,
  type SensitivityView,
} from '../analysis/sensitivity.js';
import { round } from '../../foundation/round.js';
import type { RunData } from './load.js';

/**
 * The report's section on the recovery criterion's sensitivity (issue 32, point 6): the
 * sentence (robust, or which choice flips the outcome), then the outcome (one run) or the
 * valid runs' tally (several) for every k and tolerance, the run's own criterion in bold.
 * Null when no run has one: invalid runs (no verdict to test) and summaries written
 * before it existed.
 */
export function sensitivityLines(runs: readonly RunData[]): string[] | null {
  const v = sensitivityView(runs.map((r) => r.summary.sensitivity));
  if (!v) return null;
  const many = runs.length > 1;
  const cell = (k: number, t: number): string => {
    const c = v.cells.find((c) => c.k === k && c.tolerance === t);
    if (!c) return '–';
    if (!c.allowed || c.label === null) return `—, below noise floor ${pct(v.noiseFloor ?? 0)}`;
    return c.own ? `**${c.label}** (${many ? 'the experiment' : 'this run'}’s criterion)` : c.label;
  };
  return [
    `${capitalise(v.sentence)}.`,
    '',
    `| recovered within | ${v.tolerances.map((t) => `tolerance ${pct(t)}`).join(' | ')} |`,
    `|---|${v.tolerances.map(() => '---').join('|')}|`,
    ...v.ks.map(
      (k) =>
        `| ${k} × D (${round(k * v.triggerDurationS, 3)} s) | ${v.tolerances.map((t) => cell(k, t)).join(' | ')} |`,
    ),
    '',
    explanation(v, many),
    ...(ownBelowNoiseFloor(v)
      ? [
          '',
          `> ⚠ The ${many ? 'experiment' : 'run'}’s own tolerance (${pct(v.criterion.tolerance)}) is below the noise floor of its window (${pct(v.noiseFloor!)}): its outcome rests on a criterion noise alone can miss. A longer window lowers the floor.`,
        ]
      : []),
  ];
}

function explanation(v: SensitivityView, many: boolean): string {
  const floor =
    v.noiseFloor === null
      ? ''
      : ` A tolerance below the noise floor of the window, 3/√(baseline goodput × W) = ${pct(v.noiseFloor)}${many ? ' (the highest of the runs)' : ''}, is not computed: noise alone would miss it.`;
  return (
    `Each cell judges the same recorded goodput again, with the recovery multiple k of its row (recovered within k × D, D = ${v.triggerDurationS} s the trigger's duration) and the tolerance of its column, the leading window (W = ${v.windowS} s${effectiveWindowS(v.windowS) !== v.windowS ? `, counted in whole seconds: ${effectiveWindowS(v.windowS)} s` : ''}) and hold (${v.holdS} s) as planned; the criterion in bold is the one the outcome above was given by.` +
    (many
      ? ` Each cell counts the outcomes of the ${v.runs} valid run${v.runs === 1 ? '' : 's'} under it (an invalid run has no verdict, so none here).`
      : '') +
    floor +
    ' The table shows how far the verdict depends on that choice, not which choice is right.'
  );
}

function capitalise(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
