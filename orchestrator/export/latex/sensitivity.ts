import {
  ownBelowNoiseFloor,
  pct,
  sensitivityView,
  type SensitivityView,
} from '../../analysis/sensitivity.js';
import { table, type TableRun, type TexTable } from './tables.js';
import { tex } from './tex.js';

/**
 * The recovery criterion's sensitivity for a thesis (issue 32, point 6): a table of the
 * outcome (one run) or the valid runs' tally (several) for every k and tolerance,
 * tables/sensitivity.tex, and a methods paragraph that says how it was made and what it
 * shows. Both read summary.json's `sensitivity` as written, nothing recomputed; both are
 * absent when no run has one (invalid runs: no verdict to test).
 */

function viewOf(runs: readonly TableRun[]): SensitivityView | null {
  return sensitivityView(runs.map((r) => r.summary.sensitivity));
}

/** tables/sensitivity.tex, in a list: empty when no run has a sensitivity. */
export function sensitivityTables(name: string, runs: readonly TableRun[]): TexTable[] {
  const v = viewOf(runs);
  if (!v) return [];
  const many = runs.length > 1;
  const cell = (k: number, t: number): string => {
    const c = v.cells.find((c) => c.k === k && c.tolerance === t);
    if (!c) return '--';
    if (!c.allowed || c.label === null) return '--- (below the noise floor)';
    return c.own ? `\\textbf{${tex(c.label)}}` : tex(c.label);
  };
  const n = v.tolerances.length;
  // Text cells (a tally can be long) wrap within the text width: the n columns, their padding
  // included, take 76% of it, leaving the label column room (0.72 / n without the padding overran
  // the page by 8 pt with four tolerances).
  const col = `>{\\raggedright\\arraybackslash}p{\\dimexpr ${(0.76 / n).toFixed(3)}\\linewidth - 2\\tabcolsep\\relax}`;
  const t = table(
    'sensitivity',
    `${tex(name)}: the outcome${many ? `s of the ${v.runs} valid runs` : ''} under each recovery criterion, judged again on the same recorded goodput: rows the recovery multiple $k$ (recovered within $k \\times D$, $D = ${v.triggerDurationS}$~s the trigger's duration), columns the tolerance; window and hold as planned. In bold the criterion the outcome was given by.${v.noiseFloor !== null ? ` A tolerance below the noise floor of the window, $3/\\sqrt{g W} = ${tex(pct(v.noiseFloor))}$ ($g$ the baseline goodput, $W$ the window${many ? '; the highest of the runs' : ''}), is not computed.` : ''} ${tex(capitalise(v.sentence))}.`,
    ['Recovered within', ...v.tolerances.map((t) => `Tolerance ${tex(pct(t))}`)],
    v.ks.map((k) => [`$${k} \\times D$`, ...v.tolerances.map((t) => cell(k, t))]),
    { spec: `l${col.repeat(n)}` },
  );
  return [t];
}

/** The methods paragraph on the criterion's sensitivity, with its finding; '' when there is no table. */
export function sensitivityParagraph(runs: readonly TableRun[]): string {
  const v = viewOf(runs);
  if (!v) return '';
  const set = (xs: readonly string[]) => `\\{${xs.join(', ')}\\}`;
  const below = ownBelowNoiseFloor(v)
    ? ` The ${v.runs > 1 ? 'experiment' : 'run'}'s own tolerance, ${tex(pct(v.criterion.tolerance))}, is itself below that floor: its outcome rests on a criterion noise alone can miss.`
    : '';
  return `\n\\paragraph{Sensitivity to the recovery criterion.} The recovery multiple $k$ and the tolerance are method decisions, so the outcome was judged again on the same recorded goodput with $k \\in ${set(v.ks.map(String))}$ and a tolerance in $${set(v.tolerances.map((t) => tex(pct(t))))}$, the window and hold unchanged (Table~\\ref{tab:sensitivity})${v.noiseFloor !== null ? `; a tolerance below the noise floor of the window, $3/\\sqrt{g W}$ for a baseline goodput $g$ over a window $W$, here ${tex(pct(v.noiseFloor))}, was not computed, as noise alone would miss it` : ''}. ${v.runs > 1 ? `Over the ${v.runs} valid runs, the` : 'The'} outcome ${v.sentence.startsWith('flips') ? '' : 'is '}${tex(v.sentence)}.${below}\n`;
}

function capitalise(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
