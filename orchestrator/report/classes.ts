import type { ClassesSummary, ClassWindow, WindowName } from '../analysis/classes.js';
import { WINDOWS } from '../analysis/classes.js';

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
    const judged = c.classes.flatMap((k) => k.thresholds.map((t) => ({ k: k.name, ...t })));
    if (judged.length > 0)
      out.push(
        `Thresholds, judged on the ${c.judgedOn} window (no samples: unmeasured, never pass):`,
        '',
        '| class | metric | limit | value | samples | verdict |',
        '|---|---|---|---|---|---|',
        ...judged.map((t) => {
          const show = (v: number): string =>
            t.metric === 'errorRatio' ? `${+(v * 100).toFixed(4)}%` : `${Math.round(v)} ms`;
          return `| ${t.k} | ${t.metric} | ${show(t.limit)} | ${t.value === null ? '–' : show(t.value)} | ${t.samples} | **${t.verdict}** |`;
        }),
        '',
      );
  }
  out.push(
    `Windows hold the origins whose intended time falls in them; "cancelled" are streams the user stopped reading on purpose (neither a success nor an error). ${classesOf(withClasses[0]!.summary)!.definitions}`,
  );
  return out;
}

/** One verdict line per run, for the Verdicts section; empty when no class has thresholds. */
export function classVerdictLines(runs: readonly { index: number; summary: unknown }[]): string[] {
  return runs.flatMap((r) => {
    const v = classesOf(r.summary)?.verdict;
    return v ? [`- run ${r.index}: request-class thresholds: **${v}**.`] : [];
  });
}
