import type { RunSummary } from '../analysis/summary.js';
import { describeTally, tallyOutcomes } from '../analysis/tally.js';

/**
 * A run's outcome and validity in results/index's words: "metastable" / "valid" for one run,
 * "metastable 2/2; invalid 1 (schedule lag)" / "2/3 valid" for several; an interrupted or
 * failed run says so first, whatever it measured before.
 */
export function indexOutcome(
  runs: readonly RunSummary[],
  how: { readonly interrupted: boolean; readonly failed: boolean },
): { outcome: string; validity: string } {
  const t = tallyOutcomes(runs);
  const validity =
    runs.length === 0
      ? 'none'
      : runs.length === 1
        ? t.valid === 1
          ? 'valid'
          : 'invalid'
        : `${t.valid}/${t.runs} valid`;
  const measured = runs.length === 0 ? '' : runs.length === 1 ? runs[0]!.outcome : describeTally(t);
  const end = how.failed ? 'failed' : how.interrupted ? 'interrupted' : '';
  return { outcome: [end, measured].filter((s) => s !== '').join(': ') || '–', validity };
}
