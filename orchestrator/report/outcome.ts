import type { RunSummary } from '../analysis/summary.js';
import { describeTally, isValid, tallyOutcomes } from '../analysis/tally.js';
import { describeFailed } from '../analysis/validity.js';
import type { ResultsData, RunData } from './load.js';
import { interruptedAtS, interruptedSentence, invalidRunDetail, invalidRunsDetail } from './headline.js';

/**
 * The outcome lines of a report (DESIGN.md §2): the outcome first, in one sentence with
 * its evidence; for an invalid run, the failed validity checks and that no verdict is given.
 */

/** Whether the run reached its (first) trigger; summaries from before `applied` did. */
export function triggerReached(s: RunSummary): boolean {
  return s.trigger.applied !== false;
}

/** "The run ended before the trigger (planned at 4–6 s): …", or null when it was reached. */
export function notReachedLine(s: RunSummary): string | null {
  if (triggerReached(s)) return null;
  return `The run ended before the trigger (planned at ${s.trigger.startS}–${s.trigger.endS} s): nothing after it was measured, so there is no trigger window, no after-the-trigger figure and no recovery.`;
}

/** The run's outcome in one sentence with its evidence (its reason names it). */
export function outcomeSentence(s: RunSummary): string {
  if (!isValid(s))
    return `**Invalid run: no verdict is given.** It failed ${s.validity?.failed.length ?? 0} validity check${s.validity?.failed.length === 1 ? '' : 's'} (docs/metrics.md, Run validity):`;
  const reason = sentence(s.outcomeReason);
  const effect =
    s.sustainingEffect && !s.outcomeReason.includes(s.sustainingEffect)
      ? ` Sustaining effect: ${s.sustainingEffect}.`
      : '';
  const projection =
    s.projectedRecoveryS !== null && !s.outcomeReason.includes(String(s.projectedRecoveryS))
      ? ` Projected recovery about ${s.projectedRecoveryS} s after the trigger at the measured trend: observe longer.`
      : '';
  const unjudged = s.validity
    ? ''
    : ` (Run validity was not judged: this summary was written before it existed; the outcome is read from its recovered/metastable fields${s.outcome === 'metastable' ? ', a verdict on the recovery deadline alone, without the self-sustaining test' : ''}.)`;
  return `**Outcome: ${s.outcome}.** ${reason}${effect}${projection}${unjudged}`;
}

/** The failed checks of an invalid run, one bullet each, with value and limit. */
export function failedCheckLines(s: RunSummary): string[] {
  return s.validity ? describeFailed(s.validity).map((f) => `- ${f}`) : [];
}

/**
 * The first lines of the report: the outcome (several runs: the counts, then each run). An
 * interrupted run leads with its interruption; an invalid one names each failed check with
 * its value and limit, the machine's load while it ran and the remedies that fit
 * (headline.ts), in that order. `twin`: the folder's simulation of the same file, if any.
 */
export function outcomeLead(runs: readonly RunData[], twin?: ResultsData | null): string[] {
  if (runs.length === 1) {
    const s = runs[0]!.summary;
    const notReached = notReachedLine(s);
    const at = interruptedAtS(s);
    const head = at !== null ? interruptedSentence(s, at, outcomeSentence(s)) : outcomeSentence(s);
    const bad = at !== null || !isValid(s);
    return [
      head,
      ...failedCheckLines(s),
      ...(notReached ? ['', notReached] : []),
      ...(bad ? invalidRunDetail(runs[0]!, twin) : []),
      '',
    ];
  }
  const t = tallyOutcomes(runs.map((r) => r.summary));
  const out = [`**Outcome across ${runs.length} runs: ${describeTally(t)}.**`, ''];
  for (const r of runs) {
    const s = r.summary;
    const notReached = notReachedLine(s);
    const at = interruptedAtS(s);
    if (at !== null)
      out.push(
        `- run ${r.index}: **interrupted at ${at} s**, before its schedule ended: no verdict${s.validity && s.validity.failed.length > 0 ? ` (then failed: ${describeFailed(s.validity).join('; ')})` : ''}.`,
      );
    else if (!isValid(s)) {
      out.push(
        `- run ${r.index}: **invalid**, no verdict: ${s.validity ? describeFailed(s.validity).join('; ') : 'no failed check recorded'}.${notReached ? ` ${notReached}` : ''}`,
      );
    } else out.push(`- run ${r.index}: **${s.outcome}**: ${sentence(s.outcomeReason)}`);
  }
  out.push(...invalidRunsDetail(runs, twin));
  if (t.invalid > 0)
    out.push(
      '',
      t.valid > 0
        ? `Figures across runs cover the ${t.valid} valid run${t.valid === 1 ? '' : 's'} only.`
        : 'No run is valid: no figure across runs is given.',
    );
  out.push('');
  return out;
}

/** A run's recovery time as the outcome allows it. */
export function recoveryCell(s: RunSummary): string {
  if (!isValid(s)) return 'no verdict (invalid run)';
  switch (s.outcome) {
    case 'recovered':
    case 'recovered-late':
      return s.recoveryTimeS !== null
        ? `${s.recoveryTimeS} s${s.outcome === 'recovered-late' ? ' (late)' : ''}`
        : '–';
    case 'not-recovered':
      return `not recovered${s.projectedRecoveryS !== null ? ` (projected about ${s.projectedRecoveryS} s)` : ''}`;
    case 'metastable':
      return 'not recovered';
    default:
      return 'unmeasured';
  }
}

/** The validity checks of every run: check, value, limit, result. */
export function validityLines(runs: readonly RunData[]): string[] {
  const rows: string[] = [];
  const unjudged: number[] = [];
  for (const { index, summary: s } of runs) {
    if (!s.validity) {
      unjudged.push(index);
      continue;
    }
    for (const c of s.validity.checks)
      rows.push(
        `| ${index} | ${esc(c.what)} | ${esc(c.value === null ? 'unmeasured' : String(c.value))} | ${esc(String(c.limit))} | ${c.ok ? 'ok' : '**failed**'} |`,
      );
  }
  const out: string[] = [];
  if (rows.length > 0) {
    const lims = runs.find((r) => r.summary.validity)!.summary.validity.limits;
    out.push(
      'Run validity (docs/metrics.md): a run gives a verdict only when every check holds.',
      '',
      '| run | check | value | limit | result |',
      '|---|---|---|---|---|',
      ...rows,
      '',
      `${runs.some((r) => r.replay) ? "A replayed run's lateness is judged by its replay (below); the fixed schedule lag limit, where there is none," : 'The schedule lag limit'} is ${lims.lagP99Ms} ms: ${lims.lagP99Why}.`,
      '',
    );
  }
  if (unjudged.length > 0)
    out.push(
      `Run validity was not judged for run${unjudged.length > 1 ? 's' : ''} ${unjudged.join(', ')}: the summary was written before it existed (and its recovery time by the earlier definition, over a trailing window).`,
      '',
    );
  return out;
}

function sentence(x: string): string {
  const t = x.trim();
  const s = t.charAt(0).toUpperCase() + t.slice(1);
  return /[.!?]$/.test(s) ? s : `${s}.`;
}

function esc(x: string): string {
  return x.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}
