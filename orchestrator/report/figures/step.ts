import type { StepTable } from '../tables.js';
import {
  annotationLayers,
  document,
  EDGE_PX,
  markerRule,
  seriesEncoding,
  type Figure,
  type Row,
} from './common.js';

const OFFERED_AXIS = 'offered load (req/s)';

/** Pixels a scale reaches past its first and last points: a point at the axis edge is drawn whole. */

/**
 * The figures of a step test (see tables.ts): goodput against offered load with the
 * ideal (goodput = offered) dashed, and response time p50/p99 against offered load
 * (log scale); both with the saturation point marked when one was found.
 */
export function stepFigures(t: StepTable): Figure[] {
  const sat = t.saturation;
  const maxOffered = Math.max(0, ...t.steps.map((s) => s.offeredPerS));
  const domain = [0, maxOffered] as const;
  const marker = sat
    ? [
        markerRule(sat.offeredPerS, { dashed: true }),
        ...annotationLayers([{ x: sat.offeredPerS, label: `saturation ${sat.offeredPerS} req/s` }], domain),
      ]
    : [];
  const x = {
    field: 'offered',
    type: 'quantitative',
    title: OFFERED_AXIS,
    scale: { domain, nice: false, padding: EDGE_PX },
  };
  const gp: Row[] = t.steps.map((s) => ({ offered: s.offeredPerS, series: 'goodput', value: s.goodputPerS }));
  const ideal: Row[] = [
    { offered: 0, series: 'ideal: goodput = offered', value: 0 },
    { offered: maxOffered, series: 'ideal: goodput = offered', value: maxOffered },
  ];
  const gLabels = ['goodput', 'ideal: goodput = offered'];
  const goodput: Figure = {
    id: 'steps-goodput',
    title: 'Goodput against offered load',
    caption: `Goodput at each step of offered load (${t.steps.length} steps), the ideal dashed${sat ? `; saturation at ${sat.offeredPerS} req/s` : '; no saturation found'}.`,
    data: [...gp, ...ideal],
    series: gLabels,
    spec: document('Goodput against offered load', {
      layer: [
        {
          data: { values: [...gp, ...ideal] },
          mark: { type: 'line', point: true },
          params: [{ name: 'zoom', select: 'interval', bind: 'scales' }],
          encoding: {
            x,
            y: {
              field: 'value',
              type: 'quantitative',
              title: 'goodput (req/s)',
              scale: { padding: EDGE_PX },
            },
            ...seriesEncoding(gLabels),
            tooltip: [
              { field: 'offered', type: 'quantitative', title: OFFERED_AXIS },
              { field: 'value', type: 'quantitative', title: 'goodput (req/s)' },
            ],
          },
        },
        ...marker,
      ],
    }),
  };
  const lat: Row[] = t.steps.flatMap((s) => [
    { offered: s.offeredPerS, series: 'p50', value: s.latencyMs.p50, samples: s.latencyMs.samples },
    { offered: s.offeredPerS, series: 'p99', value: s.latencyMs.p99, samples: s.latencyMs.samples },
  ]);
  const latency: Figure = {
    id: 'steps-latency',
    title: 'Response time against offered load',
    caption: `Response time p50 and p99 (successes only) at each step of offered load, log scale${sat ? `; saturation at ${sat.offeredPerS} req/s` : ''}.`,
    data: lat,
    series: ['p50', 'p99'],
    spec: document('Response time against offered load', {
      layer: [
        {
          data: { values: lat },
          mark: { type: 'line', point: true, invalid: 'break-paths-show-domains' },
          params: [{ name: 'zoom', select: 'interval', bind: 'scales' }],
          encoding: {
            x,
            y: {
              field: 'value',
              type: 'quantitative',
              title: 'response time (ms, log scale)',
              scale: { type: 'log', padding: EDGE_PX },
            },
            ...seriesEncoding(['p50', 'p99']),
            tooltip: [
              { field: 'offered', type: 'quantitative', title: OFFERED_AXIS },
              { field: 'series', type: 'nominal' },
              { field: 'value', type: 'quantitative', title: 'ms' },
              { field: 'samples', type: 'quantitative', title: 'samples' },
            ],
          },
        },
        ...marker,
      ],
    }),
  };
  return [goodput, latency];
}
