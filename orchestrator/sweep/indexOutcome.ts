import type { RunSummary } from '../analysis/summary.js';
import { isValid } from '../analysis/tally.js';
import { pointVerdict } from './table.js';

/**
 * A sweep's outcome and validity in results/index's words: its points' verdicts counted
 * ("metastable 2, recovered 1 of 3 points"; a point not run is "not run") and its runs'
 * validity ("5/6 valid"); an interrupted or failed sweep says so first.
 * `points` holds each point's runs, empty for a point not (completely) run.
 */
export function sweepIndexOutcome(
  points: readonly (readonly RunSummary[])[],
  how: { readonly interrupted: boolean; readonly failed: boolean },
): { outcome: string; validity: string } {
  const counts = new Map<string, number>();
  for (const runs of points) {
    const v = runs.length === 0 ? 'not run' : pointVerdict(runs);
    counts.set(v, (counts.get(v) ?? 0) + 1);
  }
  const verdicts = [...counts].map(([v, n]) => `${v} ${n}`).join(', ');
  const runs = points.flat();
  const valid = runs.filter(isValid).length;
  const end = how.failed ? 'failed: ' : how.interrupted ? 'interrupted: ' : '';
  return {
    outcome: `${end}${verdicts} of ${points.length} points`,
    validity: runs.length === 0 ? 'none' : `${valid}/${runs.length} valid`,
  };
}
