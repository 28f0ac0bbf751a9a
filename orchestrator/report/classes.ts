import type { ClassesSummary, ClassWindow, WindowName } from '../analysis/classes.js';
import { WINDOWS } from '../analysis/classes.js';
import type { HypothesisResult } from '../analysis/hypothesis.js';

/** The per-class part of a run's summary.json (absent for runs without a workload mix). */
export function classesOf(summary: unknown): ClassesSummary | undefined {
  return (summary as { classes?: ClassesSummary }).classes;
}

const LABEL: Record<WindowName, string> = {
  warmup: 'warm-up',
  baseline: 'baseline',
  trigger: 'trigger',
  observe: 'observe',
};

const ms = (v: number | null, samples: number): string =>
  v === null ? 'unmeasured' : `${Math.round(v)} ms (n=${samples})`;

function row(name: string, w: WindowName, c: ClassWindow): string {
  const err = c.errorRatio === null ? '–' : `${(c.errorRatio * 100).toFixed(2)}%`;
  return `| ${name} | ${LABEL[w]} | ${c.origins} | ${c.ok} | ${c.failed} | ${c.cancelled} | ${err} | ${ms(c.responseMs.p95, c.responseMs.samples)} | ${c.ttftMs.samples ? ms(c.ttftMs.p95, c.ttftMs.samples) : '–'} | ${c.itlMs.samples ? ms(c.itlMs.p50, c.itlMs.samples) : '–'} |`;
}

/** The "Request classes" section of one run (the first run's, with several). */
export function classLines(runs: readonly { index: number; summary: unknown }[]): string[] | null {
  const withClasses = runs.filter((r) => classesOf(r.summary));
  if (withClasses.length === 0) return null;
  const out: string[] = [];
  for (const r of withClasses) {
    const c = classesOf(r.summary)!;
    if (runs.length > 1) out.push(`Run ${r.index}:`, '');
    out.push(
      '| class | window | origins | ok | failed | cancelled | error ratio | response p95 | TTFT p95 | ITL p50 |',
      '|---|---|---|---|---|---|---|---|---|---|',
      ...c.classes.flatMap((k) =>
        WINDOWS.filter((w) => k.windows[w].origins > 0).map((w) => row(k.name, w, k.windows[w])),
      ),
      '',
    );
    out.push(...classVerdictTable(r.summary));
  }
  out.push(
    `Windows hold the origins whose intended time falls in them; "cancelled" are streams the user stopped reading on purpose (neither a success nor an error). ${classesOf(withClasses[0]!.summary)!.definitions}`,
  );
  return out;
}

/** The per-class entries of a run's hypothesis judgement (hypothesis.classes). */
function classVerdicts(summary: unknown): HypothesisResult[] {
  return ((summary as { hypothesis?: HypothesisResult[] }).hypothesis ?? []).filter(
    (h) => h.class !== undefined,
  );
}

function shown(h: HypothesisResult): string {
  if (h.value === null) return `– (n=${h.samples}) **${h.verdict}**`;
  const v =
    h.metric === 'errorRatio' || h.metric === 'goodput'
      ? `${+(h.value * 100).toFixed(4)}%`
      : `${Math.round(h.value)} ms`;
  return `${v} (n=${h.samples}) **${h.verdict}**`;
}

/**
 * Each class's thresholds with its verdicts in both windows, read from the run's one
 * hypothesis judgement (the same entries as the Verdicts table and --fail-on).
 */
function classVerdictTable(summary: unknown): string[] {
  const judged = classVerdicts(summary);
  if (judged.length === 0) return [];
  const rows = new Map<
    string,
    { cls: string; metric: string; threshold: string; w: Map<string, HypothesisResult> }
  >();
  for (const h of judged) {
    const key = `${h.class}\u0000${h.metric}`;
    const row = rows.get(key) ?? { cls: h.class!, metric: h.metric, threshold: h.threshold, w: new Map() };
    row.w.set(h.window, h);
    rows.set(key, row);
  }
  const cell = (h: HypothesisResult | undefined): string => (h ? shown(h) : '–');
  return [
    'Thresholds per class (`hypothesis.classes`), judged like every hypothesis threshold on the origins that completed in the baseline and after recovery (no samples: unmeasured, never a pass):',
    '',
    '| class | metric | threshold | baseline | after recovery |',
    '|---|---|---|---|---|',
    ...[...rows.values()].map(
      (r) =>
        `| ${r.cls} | ${r.metric} | \`${r.threshold}\` | ${cell(r.w.get('baseline'))} | ${cell(r.w.get('afterRecovery'))} |`,
    ),
    '',
  ];
}

/** One verdict line per run, for the Verdicts section; empty when no class has thresholds. */
export function classVerdictLines(runs: readonly { index: number; summary: unknown }[]): string[] {
  return runs.flatMap((r) => {
    const v = classVerdicts(r.summary).map((h) => h.verdict);
    if (v.length === 0) return [];
    const all = v.includes('fail') ? 'fail' : v.includes('unmeasured') ? 'unmeasured' : 'pass';
    return [`- run ${r.index}: request-class thresholds (both windows): **${all}**.`];
  });
}
