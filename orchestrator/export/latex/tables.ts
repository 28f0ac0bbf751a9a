import type { RunSummary, WindowSummary } from '../../analysis/summary.js';
import { count, fixed, num, secondsDecimals, tex } from './tex.js';

/**
 * The tables of an experiment's results folder as booktabs LaTeX, one row per run: the
 * baseline, after the trigger, and the outcome. Measured values to three significant
 * figures (report/numbers.ts), each percentile beside its sample count, a \label each.
 */

export interface TexTable {
  /** File stem: tables/<id>.tex, labelled tab:<id>. */
  readonly id: string;
  readonly tex: string;
}

export interface TableRun {
  readonly index: number;
  readonly summary: RunSummary;
}

const WINDOW_HEAD = ['Run', 'Offered', 'Goodput', 'Ampl.', 'Ampl.', 'p50', 'p90', 'p99', '$n$'];
// Units (and which amplification) on a second header row, so nine columns fit the text width.
const WINDOW_UNITS = {
  units: [
    '',
    '(\\si{\\per\\second})',
    '(\\si{\\per\\second})',
    'client',
    'server',
    '(\\si{\\milli\\second})',
    '(\\si{\\milli\\second})',
    '(\\si{\\milli\\second})',
    '',
  ],
};

/** The outcome table's rows: its four columns of seconds share one precision (tex.ts secondsDecimals). */
function outcomeRows(runs: readonly TableRun[]): string[][] {
  const seconds = (s: RunSummary) => [s.trigger.startS, s.trigger.endS, s.recoveryTimeS, s.recoveryDeadlineS];
  const d = secondsDecimals(runs.flatMap((r) => seconds(r.summary)));
  return runs.map((r) => {
    const s = r.summary;
    return [
      String(r.index),
      s.validity.valid ? 'yes' : 'no',
      tex(s.outcome),
      ...seconds(s).map((v) => fixed(v, d)),
    ];
  });
}

function windowRow(index: number, w: WindowSummary): string[] {
  const l = w.latencyMs;
  return [
    String(index),
    num(w.offeredPerS),
    num(w.goodputPerS),
    num(w.amplification),
    num(w.amplificationServer),
    num(l.p50),
    num(l.p90),
    num(l.p99),
    count(l.samples),
  ];
}

export function table(
  id: string,
  caption: string,
  head: readonly string[],
  rows: readonly string[][],
  opts: {
    /** The tabular's column spec; default a label column, then numbers right-aligned. */
    readonly spec?: string;
    /** A second header row under `head`, e.g. each column's unit. */
    readonly units?: readonly string[];
  } = {},
): TexTable {
  const spec = opts.spec ?? `l${'r'.repeat(head.length - 1)}`;
  return {
    id,
    tex: [
      // No placement here: a thesis places its tables its own way; main.tex sets them where they
      // are written (float's [H]), so no table is left alone on a float page.
      '\\begin{table}',
      '\\centering',
      '\\small',
      `\\caption{${caption}}`,
      `\\label{tab:${id}}`,
      `\\begin{tabular}{${spec}}`,
      '\\toprule',
      `${head.join(' & ')} \\\\`,
      ...(opts.units ? [`${opts.units.join(' & ')} \\\\`] : []),
      '\\midrule',
      ...rows.map((r) => `${r.join(' & ')} \\\\`),
      '\\bottomrule',
      '\\end{tabular}',
      '\\end{table}',
      '',
    ].join('\n'),
  };
}

export function experimentTables(name: string, runs: readonly TableRun[]): TexTable[] {
  const n = tex(name);
  return [
    table(
      'baseline',
      `${n}: the baseline, before the trigger. Amplification is attempts (client) or requests the api received (server) per origin; $n$ is the latency samples behind the percentiles.`,
      WINDOW_HEAD,
      runs.map((r) => windowRow(r.index, r.summary.baseline)),
      WINDOW_UNITS,
    ),
    table(
      'after-trigger',
      `${n}: after the trigger ends, to the end of the observation.`,
      WINDOW_HEAD,
      runs.map((r) => windowRow(r.index, r.summary.afterTrigger)),
      WINDOW_UNITS,
    ),
    table(
      'outcome',
      `${n}: outcome and validity of each run. Trigger times are seconds since the run's start, as applied; the recovery time is measured from the trigger's end.`,
      [
        'Run',
        'Valid',
        'Outcome',
        'Trigger from (\\si{\\second})',
        'to (\\si{\\second})',
        'Recovery time (\\si{\\second})',
        'Deadline (\\si{\\second})',
      ],
      outcomeRows(runs),
    ),
  ];
}
