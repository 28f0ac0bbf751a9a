import { mean, sampleStandardDeviation } from 'simple-statistics';
import { numbers, type RunData } from '../load.js';
import { CATEGORY_COLORS } from '../theme.js';
import {
  annotationLayers,
  document,
  legendColumns,
  rounded,
  TIME_AXIS,
  triggerLayers,
  triggerNote,
  type Figure,
  type Row,
} from './common.js';

/**
 * Figures across repetitions: every run's series overlaid (thin), with the mean across
 * runs (thick) and a band of ± one standard deviation around it, second by second.
 * The shaded trigger window is the first run's (runs differ by milliseconds).
 */
export function repetitionFigures(runs: readonly RunData[]): Figure[] {
  if (runs.length < 2) return [];
  return [
    overlay(runs, 'goodput', 'goodput', 'Goodput across runs', 'goodput (req/s)'),
    overlay(
      runs,
      'amplification_client',
      'amplification',
      'Client-side amplification across runs',
      'amplification (attempts per origin)',
    ),
    overlay(
      runs,
      'response_p99_ms',
      'latency-p99',
      'Response time p99 across runs',
      'response time p99 (ms)',
    ),
  ];
}

function overlay(
  runs: readonly RunData[],
  column: string,
  name: string,
  title: string,
  yTitle: string,
): Figure {
  const perRun: Row[] = [];
  const byT = new Map<number, number[]>();
  for (const r of runs) {
    const t = numbers(r.series, 't_s');
    numbers(r.series, column).forEach((v, i) => {
      const ti = t[i] ?? i;
      perRun.push({ t_s: ti, series: `run ${r.index}`, value: rounded(v) });
      if (v !== null) byT.set(ti, [...(byT.get(ti) ?? []), v]);
    });
  }
  const stats: Row[] = [...byT.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([t, vs]) => {
      const m = mean(vs);
      const sd = vs.length > 1 ? sampleStandardDeviation(vs) : 0;
      return {
        t_s: t,
        series: 'mean',
        value: rounded(m),
        low: rounded(m - sd),
        high: rounded(m + sd),
        runs: vs.length,
      };
    });
  const labels = runs.map((r) => `run ${r.index}`);
  const first = runs[0]!.summary.trigger;
  const maxT = Math.max(...[...byT.keys()], 0) + 1;
  const x = {
    field: 't_s',
    type: 'quantitative',
    title: TIME_AXIS,
    scale: { domain: [0, maxT], nice: false },
  };
  return {
    id: `runs-${name}`,
    title,
    caption: `${title}: each run (thin lines), the mean across runs (thick) and ± one standard deviation (band), per second; ${runs.length} runs.`,
    data: [...perRun, ...stats],
    series: [...labels, 'mean', '± 1 sd'],
    spec: document(title, {
      layer: [
        ...triggerLayers({ startS: first.startS, endS: first.endS }),
        ...annotationLayers(triggerNote({ startS: first.startS, endS: first.endS }), [0, maxT]),
        {
          data: { values: stats.map((s) => ({ ...s, band: '± 1 sd' })) },
          mark: { type: 'area', opacity: 0.25, color: '#777777' },
          encoding: {
            x,
            y: { field: 'low', type: 'quantitative', title: yTitle },
            y2: { field: 'high' },
            fill: { field: 'band', type: 'nominal', title: null, scale: { range: ['#999999'] } },
          },
        },
        {
          data: { values: perRun },
          mark: { type: 'line', strokeWidth: 1, opacity: 0.8, invalid: 'break-paths-show-domains' },
          params: [{ name: 'zoom', select: 'interval', bind: 'scales' }],
          encoding: {
            x,
            y: { field: 'value', type: 'quantitative', title: yTitle },
            color: {
              field: 'series',
              type: 'nominal',
              title: null,
              sort: labels,
              legend: { columns: legendColumns([...labels, 'mean']) },
              scale: {
                domain: [...labels, 'mean'],
                range: [...labels.map((_, i) => CATEGORY_COLORS[i % CATEGORY_COLORS.length]), '#000000'],
              },
            },
            tooltip: [
              { field: 't_s', type: 'quantitative', title: 'time (s)' },
              { field: 'series', type: 'nominal' },
              { field: 'value', type: 'quantitative', title: yTitle },
            ],
          },
        },
        {
          data: { values: stats },
          mark: { type: 'line', strokeWidth: 2.4 },
          encoding: {
            x,
            y: { field: 'value', type: 'quantitative', title: yTitle },
            color: { field: 'series', type: 'nominal' },
          },
        },
      ],
    }),
  };
}
