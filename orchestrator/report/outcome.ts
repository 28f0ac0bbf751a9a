import type { RunSummary } from '../analysis/summary.js';
import { describeTally, isValid, tallyOutcomes } from '../analysis/tally.js';
import { describeFailed } from '../analysis/validity.js';
import { MECHANISM_LABELS, type MechanismName } from '../analysis/mechanisms.js';
import { DEFAULT_STEADY_STATE } from '../analysis/steadyState.js';
import { runFigures } from './figures/run.js';
import { columnsWithPrefix, type ResultsData, type RunData } from './load.js';
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

/**
 * The figures of a run's report that show each sustaining mechanism, in the order to look
 * at them (figures/run.ts): the load against the capacity rule and the amplification; the
 * cache's hit ratio and the database's waiting requests; the failures the error paths
 * serve; each replica's completions. A figure the run did not draw is not named.
 */
export const MECHANISM_FIGURES: Readonly<Record<MechanismName, readonly string[]>> = {
  'load-above-capacity': ['throughput', 'amplification'],
  'cold-cache': ['cache', 'db'],
  'error-path': ['failures'],
  'replicas-down': ['server'],
  'gc-time': [],
};

/**
 * Where no figure draws a mechanism's own measure: the timeseries.csv columns that hold
 * it (by prefix): the database's busy connections (the db figure draws only those
 * waiting), the error paths' time, the GC time.
 */
export const MECHANISM_COLUMNS: Readonly<Partial<Record<MechanismName, readonly string[]>>> = {
  'cold-cache': ['db_pool_busy'],
  'error-path': ['error_path_seconds_'],
  'gc-time': ['gc_seconds'],
};

/** What stands behind a verdict that is not recovered, for the report to show (markdown and LaTeX format it). */
export type VerdictDetail =
  | {
      readonly kind: 'sustained';
      readonly label: string;
      readonly figure: string;
      readonly threshold: string;
      /** Figure ids (without the run's prefix) that show it, drawn in this run's report. */
      readonly figures: readonly string[];
      /** timeseries.csv columns that hold its measure, where no figure draws it. */
      readonly columns: readonly string[];
    }
  | { readonly kind: 'none-found'; readonly measured: readonly { figure: string; threshold: string }[] }
  | {
      readonly kind: 'projection';
      readonly basis: 'goodput' | 'backlog';
      readonly atS: number;
      readonly lowS: number;
      readonly highS: number | null;
    };

/**
 * The mechanism behind a metastable verdict (each met, the dominant first) with its
 * figure, threshold and the figures that show it; for not-recovered, the projection with
 * its interval, or that no sustaining effect was found and what was measured instead.
 * `run` gives the figures drawn (its timeseries); without it none is named. Summaries
 * written before mechanisms were measured give nothing.
 */
export function verdictDetails(s: RunSummary, run?: RunData): VerdictDetail[] {
  if (!isValid(s)) return [];
  const ms = s.mechanisms ?? null;
  if (s.outcome === 'metastable') {
    if (ms === null) return [];
    const drawn = run ? new Set(runFigures(run, '').map((f) => f.id)) : new Set<string>();
    return ms
      .filter((m) => m.met)
      .map((m) => {
        const cols = MECHANISM_COLUMNS[m.name] ?? [];
        return {
          kind: 'sustained' as const,
          label: MECHANISM_LABELS[m.name],
          figure: m.figure,
          threshold: m.threshold,
          figures: MECHANISM_FIGURES[m.name].filter((id) => drawn.has(id)),
          columns: run ? cols.flatMap((c) => columnsWithPrefix(run.series, c)) : [],
        };
      });
  }
  if (s.outcome !== 'not-recovered') return [];
  const p = s.projection ?? null;
  if (p) return [{ kind: 'projection', basis: p.basis, atS: p.atS, lowS: p.lowS, highS: p.highS }];
  if (ms === null) return [];
  return [
    {
      kind: 'none-found',
      measured: ms.map((m) => ({ figure: m.figure, threshold: m.threshold })),
    },
  ];
}

/** A verdict detail as one markdown line; `prefix` is the run's figure prefix (run-<i>- with several runs). */
export function verdictDetailLine(d: VerdictDetail, prefix = ''): string {
  switch (d.kind) {
    case 'sustained': {
      const where = [
        ...d.figures.map((id) => `figures/${prefix}${id}.svg`),
        ...d.columns.map((c) => `column ${c} of timeseries.csv`),
      ];
      return `Sustained by: ${d.label} — ${d.figure} (threshold: ${d.threshold}).${where.length > 0 ? ` Shown in ${where.join(', ')}.` : ''}`;
    }
    case 'none-found':
      return d.measured.length === 0
        ? 'No sustaining effect found: the run measured none of the sustaining mechanisms (docs/metrics.md, Outcomes), so it is not called metastable.'
        : `No sustaining effect found, so not metastable: ${d.measured.map((m) => `${m.figure} (threshold: ${m.threshold})`).join('; ')}.`;
    case 'projection':
      return `${projectionSentence(d)}: observe longer.`;
  }
}

/** "Goodput would reach the recovery threshold about 61.2 s after the trigger (95% interval 50–80 s)". */
export function projectionSentence(p: {
  basis: 'goodput' | 'backlog';
  atS: number;
  lowS: number;
  highS: number | null;
}): string {
  const interval = `95% interval ${p.lowS}–${p.highS === null ? 'never' : `${p.highS} s`}`;
  return p.basis === 'goodput'
    ? `Projection: goodput would reach the recovery threshold about ${p.atS} s after the trigger (${interval})`
    : `Projection: goodput shows no upward trend yet, so no recovery time is projected; the backlog would empty about ${p.atS} s after the trigger (${interval})`;
}

/**
 * "Steady state: none was declared, so the default one applied (…): it held in the
 * baseline." — when the run was judged by the default steady state; null otherwise.
 */
export function defaultSteadyStateLine(s: RunSummary): string | null {
  const base = s.hypothesis.filter((h) => h.default && h.window === 'baseline');
  if (base.length === 0) return null;
  const failed = base.filter((h) => h.verdict === 'fail').map((h) => h.metric);
  const unmeasured = base.filter((h) => h.verdict === 'unmeasured').map((h) => h.metric);
  const held =
    failed.length > 0
      ? `it failed in the baseline (${failed.join(', ')})`
      : unmeasured.length > 0
        ? `it held in the baseline where measured (${unmeasured.join(', ')} unmeasured)`
        : 'it held in the baseline';
  return `Steady state: no hypothesis was declared, so the default one applied (${DEFAULT_STEADY_STATE}; docs/hypotheses.md): ${held}.`;
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
    const steady = defaultSteadyStateLine(s);
    return [
      head,
      ...failedCheckLines(s),
      ...verdictDetails(s, runs[0]).flatMap((d) => ['', verdictDetailLine(d)]),
      ...(steady ? ['', steady] : []),
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
    } else {
      out.push(`- run ${r.index}: **${s.outcome}**: ${sentence(s.outcomeReason)}`);
      for (const d of verdictDetails(s, r)) out.push(`  - ${verdictDetailLine(d, `run-${r.index}-`)}`);
    }
  }
  const steady = defaultSteadyStateLine(runs[0]!.summary);
  if (steady) out.push('', steady);
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
      return `not recovered${
        s.projection
          ? s.projection.basis === 'goodput'
            ? ` (projected about ${s.projection.atS} s, 95% interval ${s.projection.lowS}–${s.projection.highS ?? 'never'})`
            : ' (no sustaining effect found; the backlog drains)'
          : s.projectedRecoveryS !== null
            ? ` (projected about ${s.projectedRecoveryS} s)`
            : s.mechanisms
              ? ' (no sustaining effect found)'
              : ''
      }`;
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
