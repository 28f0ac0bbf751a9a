import type { RunSummary } from '../analysis/summary.js';
import { rowsToCsv } from './exports.js';
import type { Figure } from './figures/common.js';
import { runFigures } from './figures/run.js';
import { parseTimeseries, type RunData } from './load.js';
import { printFigure, svgToPdf } from './pdf.js';
import { renderSvg } from './svg.js';

/**
 * A run of a few seconds, as timeseries.csv and summary.json give it: the figures a run's
 * report draws (lines over shaded phases, a marker, a capacity rule, stacked areas, a
 * stack of two plots), each from a handful of rows. Only what runFigures reads is set.
 */
function tinyRun(): RunData {
  const phases = ['warmup', 'warmup', 'baseline', 'baseline', 'trigger', 'trigger', 'observe', 'observe'];
  const lines = phases.map((p, t) =>
    [t, p, 100, 100 + 30 * t, 100 - 5 * t, 1 + t / 10, 1, t % 3, 40 + t, 90 + t, 120 + t, t, 4].join(','),
  );
  const header =
    't_s,phase,offered,attempts,goodput,amplification_client,amplification_server,failed_timeout,response_p50_ms,response_p99_ms,response_max_ms,server_queue_depth,server_busy_workers';
  const summary = {
    trigger: { applied: true, startS: 4, endS: 6 },
    outcome: 'recovered',
    recovered: true,
    recoveryTimeS: 1,
    recoveryDeadlineS: 10,
    capacity: { nominalPerS: 120, measuredPerS: null },
  } as unknown as RunSummary;
  return {
    index: 1,
    manifest: undefined as unknown as RunData['manifest'],
    summary,
    series: parseTimeseries(`${header}\n${lines.join('\n')}\n`),
  };
}

/**
 * Draws a tiny run's figures as a report would (SVG, the print's search, PDF, CSV) and
 * throws the files away, stopping between steps once `stopped`. A report's first figures ran in V8's interpreter (Vega-Lite's
 * compiler, Vega's parser and dataflow, pdfkit's drawing): drawn once while a run's
 * simulation runs on another thread, the run's own figures find that code compiled.
 * The files of a report do not depend on it: a render is a function of its spec alone
 * (svg.ts), text is measured and laid out by the text alone (textWidth.ts, fontLayouts.ts).
 */
export async function warmUp(stopped: () => boolean = () => false): Promise<void> {
  const figures: Figure[] = runFigures(tinyRun(), '');
  for (const f of figures) {
    if (await over(stopped)) return;
    await renderSvg(f.spec);
    if (await over(stopped)) return;
    const print = await printFigure(f.spec, 'column');
    if (await over(stopped)) return;
    await svgToPdf(print.svg, 8.5, f.title);
    rowsToCsv(f.data);
  }
}

/**
 * Whether to stop, asked after a pause that holds the process open for nothing: a process
 * with nothing else to do (its run failed, or ended without a report) exits there.
 */
function over(stopped: () => boolean): Promise<boolean> {
  return new Promise((resolve) => setTimeout(() => resolve(stopped()), 0).unref());
}
