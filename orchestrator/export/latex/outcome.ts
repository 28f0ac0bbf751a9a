import type { RunData } from '../../report/load.js';
import { defaultSteadyStateLine, verdictDetails, type VerdictDetail } from '../../report/outcome.js';
import { isValid } from '../../analysis/tally.js';
import type { TableRun } from './tables.js';
import { tex } from './tex.js';

/**
 * The verdicts' defence for a thesis (issue 32, point 2): after the methods, one
 * paragraph saying, for each valid run that did not recover, the mechanism that sustains
 * a metastable verdict with its figure, threshold and the figure that shows it
 * (Figure~\ref{fig:<id>}), or the projection of a not-recovered one with its interval, or
 * that no sustaining effect was found; and whether the steady state was the default one.
 * Read from summary.json as written, nothing recomputed; empty when there is nothing to say.
 */
export function outcomeParagraph(runs: readonly TableRun[], data: readonly RunData[] = []): string {
  const many = runs.length > 1;
  const sentences: string[] = [];
  for (const r of runs) {
    const s = r.summary;
    if (!isValid(s)) continue;
    const run = data.find((d) => d.index === r.index);
    const prefix = many ? `run-${r.index}-` : '';
    const who = many ? `Run ${r.index} is ${s.outcome}` : `The run is ${s.outcome}`;
    const details = verdictDetails(s, run);
    if (details.length === 0) continue;
    sentences.push(`${tex(who)}: ${details.map((d) => detailTex(d, prefix)).join(' ')}`);
  }
  const steady = runs.length > 0 ? defaultSteadyStateLine(runs[0]!.summary) : null;
  if (steady) sentences.push(tex(steady));
  return sentences.length === 0 ? '' : `\n\\paragraph{Outcome.} ${sentences.join(' ')}\n`;
}

function detailTex(d: VerdictDetail, prefix: string): string {
  switch (d.kind) {
    case 'sustained': {
      const figs = d.figures.map((id) => `Figure~\\ref{fig:${prefix}${id}}`);
      const cols = d.columns.map((c) => `column \\texttt{${tex(c)}} of timeseries.csv`);
      const where = [...figs, ...cols];
      return `sustained by ${tex(d.label)}: ${tex(d.figure)} (threshold: ${tex(d.threshold)})${where.length > 0 ? `, shown in ${where.join(', ')}` : ''}.`;
    }
    case 'none-found':
      return d.measured.length === 0
        ? 'no sustaining effect found (none of the sustaining mechanisms was measured), so it is not called metastable.'
        : `no sustaining effect found, so it is not called metastable: ${tex(d.measured.map((m) => `${m.figure} (threshold: ${m.threshold})`).join('; '))}.`;
    case 'projection':
      return d.basis === 'goodput'
        ? `goodput would reach the recovery threshold about ${d.atS}~s after the trigger at the measured trend (95\\% interval ${d.lowS}--${d.highS === null ? 'never' : `${d.highS}~s`}): a longer observation is needed.`
        : `goodput shows no upward trend yet, so no recovery time is projected; the backlog would empty about ${d.atS}~s after the trigger (95\\% interval ${d.lowS}--${d.highS === null ? 'never' : `${d.highS}~s`}).`;
  }
}
