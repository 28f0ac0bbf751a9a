import {
  CTMC_ASSUMPTIONS,
  ctmcBeside,
  ctmcCurve,
  type CtmcBeside,
  type ChainKnobs,
  type CtmcCurvePoint,
} from '../analysis/markov/experiment.js';
import { readChain, regionsOf, type RetryChainParams } from '../analysis/markov/retryChain.js';
import type { Relaxation } from '../analysis/markov/levels.js';
import { apiReplicaCount } from '../spec/sections/lab.js';
import {
  bandLabels,
  document,
  EDGE_PX,
  seriesEncoding,
  type Figure,
  type Row,
} from '../report/figures/common.js';
import { TRIGGER_SHADE } from '../report/theme.js';
import type { Experiment } from '../spec/schema.js';
import { round } from '../../foundation/round.js';
import type { BistableRange } from './fluid.js';
import { builtinLab } from '../spec/builtinLab.js';

/** `metabench model --ctmc`: the retry CTMC read over offered load. */
export interface CtmcModel {
  readonly params: RetryChainParams;
  readonly regions: { readonly collapsedFromJobs: number; readonly healthyBelowJobs: number };
  readonly points: readonly CtmcCurvePoint[];
  /** The point at the experiment's own offered load. */
  readonly atOffered: CtmcCurvePoint;
  /**
   * The spectral gap at the offered load (its inverse is the relaxation time, the time scale
   * on which the chain forgets where it started); null when the inverse iteration did not
   * converge (a complex pair of slowest eigenvalues).
   */
  readonly gap: Relaxation | null;
  readonly assumptions: readonly string[];
}

export function ctmcModel(
  e: Experiment,
  offeredPerS: number,
  ratesPerS: readonly number[],
  k: ChainKnobs,
): CtmcModel {
  const rates = [...new Set([...ratesPerS, offeredPerS].map((r) => round(r, 6)))].sort((a, b) => a - b);
  const { params, points } = ctmcCurve(e, rates, k);
  const reg = regionsOf(params);
  return {
    params,
    regions: {
      collapsedFromJobs: reg.collapsedFrom * params.granularity,
      healthyBelowJobs: reg.healthyBelow * params.granularity,
    },
    points,
    atOffered: points.find((p) => p.offeredPerS === round(offeredPerS, 6))!,
    gap: (() => {
      const g = readChain(
        { ...params, arrivalPerS: offeredPerS / apiReplicaCount(builtinLab(e, 'the retry chain').api) },
        { gap: true },
      ).relaxation;
      return g && g.converged ? g : null;
    })(),
    assumptions: CTMC_ASSUMPTIONS,
  };
}

/** A time in seconds for a reader: 13 s, 5.5 min, 3.2 h, 4.1 days, 2.0e+9 s; "> …" beyond the solver. */
export function describeTime(s: number | null, resolvableS: number): string {
  if (s === null) return `> ${resolvableS.toExponential(1)} s`;
  if (s < 120) return `${round(s, 3)} s`;
  if (s < 7200) return `${round(s / 60, 1)} min`;
  if (s < 172_800) return `${round(s / 3600, 1)} h`;
  if (s < 3.15e7) return `${round(s / 86_400, 1)} days`;
  return `${s.toExponential(1)} s (${round(s / 3.15e7, 1)} years)`;
}

export function ctmcSection(m: CtmcModel, range: BistableRange): string[] {
  const p = m.params;
  const g = p.granularity;
  const o = m.atOffered;
  return [
    '## Markov model (CTMC)',
    '',
    `Metafor's single-server chain of the api and its retrying clients (research/metastability.md §10; orchestrator/analysis/markov/): state (jobs in the server, retries waiting in the orbit), ` +
      `c = ${p.workers} workers at μ = ${round(p.serviceRatePerS, 3)}/s each, timeout τ = ${p.timeoutS} s, R = ${p.retries} retries, an orbit wait of ${round(p.orbitWaitS, 3)} s, ` +
      `queue bound ${p.queueSize * g} jobs, orbit bound ${p.orbitSize * g} retries, alpha ${p.alpha}` +
      `${g > 1 ? `, counted in batches of ${g} jobs (${p.queueSize} × ${p.orbitSize} states: the drift is kept, the noise is ${g} times smaller, so times set by fluctuations, a spontaneous collapse, come out too long)` : ''}; ${o.states} states. ` +
      `Collapsed: ${m.regions.collapsedFromJobs} jobs or more in the server (the mean wait reaches the timeout); healthy: fewer than ${m.regions.healthyBelowJobs}.`,
    '',
    `- **predicted recovery time** (mean time from a full server, orbit empty, to healthy, no intervention): ${describeTime(o.recoveryS, o.resolvableS)} at ${round(o.offeredPerS, 3)} origins/s`,
    `- **expected time to a spontaneous collapse** (from an empty system until the queue first reaches ${m.regions.collapsedFromJobs} jobs; it may still drain back from there, so the time until it stays collapsed is longer): ${describeTime(o.collapseS, o.resolvableS)}`,
    `- stationary: mean jobs ${round(o.meanJobs, 3)}, probability of the collapsed region ${o.collapsedMass.toExponential(2)}`,
    `- spectral gap: ${m.gap ? `${m.gap.ratePerS.toExponential(3)}/s, relaxation time ${describeTime(1 / m.gap.ratePerS, o.resolvableS)} (the time scale on which the chain forgets its start)` : 'not found (the inverse iteration did not converge: the slowest modes are a complex pair)'}`,
    '',
    '| offered load (origins/s) | region (fluid) | mean jobs | P(collapsed) | predicted recovery time | time to a spontaneous collapse |',
    '|---|---|---|---|---|---|',
    ...m.points.map(
      (x) =>
        `| ${round(x.offeredPerS, 3)} | ${x.offeredPerS < range.lowerPerS ? 'stable' : x.offeredPerS < range.upperPerS ? 'bistable' : 'unstable'} | ${round(x.meanJobs, 3)} | ${x.collapsedMass.toExponential(2)} | ${describeTime(x.recoveryS, x.resolvableS)} | ${describeTime(x.collapseS, x.resolvableS)} |`,
    ),
    '',
    'How to read it: where the recovery time is seconds the backlog drains by itself; where it is longer than any observation the system is metastable in practice (it recovers in the model, eventually, by a rare fluctuation); where the time to a spontaneous collapse is short the system falls over without a trigger. ' +
      'A time longer than the solver resolves (about 10¹² of the chain’s fastest holding times) is written as "> that".',
    '',
    '**Assumptions of the CTMC**:',
    '',
    ...m.assumptions.map((a) => `- ${a}`),
  ];
}

/** Predicted recovery time against offered load, log scale, the fluid model's bistable range shaded. */
export function ctmcFigure(m: CtmcModel, range: BistableRange): Figure {
  const series = ['predicted recovery time', 'time to a spontaneous collapse'];
  const data: Row[] = m.points.flatMap((x) => [
    { offered: x.offeredPerS, series: series[0]!, seconds: x.recoveryS },
    { offered: x.offeredPerS, series: series[1]!, seconds: x.collapseS },
  ]);
  const top = Math.max(...m.points.map((x) => x.offeredPerS));
  const shade = range.bistable
    ? [{ start: range.lowerPerS, end: Math.min(range.upperPerS, top), label: 'bistable (fluid model)' }]
    : [];
  return {
    id: 'ctmc-recovery',
    title: 'Predicted recovery time against offered load',
    caption: `The CTMC's mean recovery time from a full server (and its mean time to a spontaneous collapse) at each offered load, log scale; ${shade.length ? `the fluid model's bistable range (${round(range.lowerPerS, 3)} to ${round(range.upperPerS, 3)} origins/s) shaded` : 'the fluid model has no bistable range (one attempt)'}; a time beyond the solver's resolution is left out.`,
    data,
    series,
    spec: document('Predicted recovery time against offered load', {
      layer: [
        ...(shade.length
          ? [
              {
                data: { values: shade },
                mark: { type: 'rect', color: TRIGGER_SHADE.color, opacity: TRIGGER_SHADE.opacity },
                encoding: { x: { field: 'start', type: 'quantitative' }, x2: { field: 'end' } },
              },
              bandLabels(shade),
            ]
          : []),
        {
          data: { values: data.filter((r) => r.seconds !== null) },
          mark: { type: 'line', point: true },
          encoding: {
            x: {
              field: 'offered',
              type: 'quantitative',
              title: 'offered load (origins/s)',
              scale: { padding: EDGE_PX },
            },
            y: {
              field: 'seconds',
              type: 'quantitative',
              title: 'mean time (s, log scale)',
              scale: { type: 'log', padding: EDGE_PX },
            },
            ...seriesEncoding(series),
            tooltip: [
              { field: 'offered', type: 'quantitative', title: 'origins/s' },
              { field: 'series', type: 'nominal' },
              { field: 'seconds', type: 'quantitative', title: 's' },
            ],
          },
        },
      ],
    }),
  };
}

/** A lab point of `--over` with the Markov model's prediction at its load and recovery deadline. */
export interface CtmcAtLabPoint {
  readonly sweep: string;
  readonly point: number;
  readonly offeredPerS: number;
  readonly triggerS: number;
  /** The lab point's recovery deadline: recovery.within × its trigger duration. */
  readonly deadlineS: number;
  readonly labVerdict: string;
  readonly ctmc: CtmcBeside;
  /** The chain's verdict: recovered when P(recovered within the deadline) ≥ ½ (null when not computed). */
  readonly ctmcVerdict: 'recovered' | 'metastable' | null;
}

export function ctmcAtLab(
  e: Experiment,
  points: readonly { sweep: string; point: number; offeredPerS: number; triggerS: number; verdict: string }[],
  k: ChainKnobs,
): CtmcAtLabPoint[] {
  return points.map((q) => {
    const deadlineS = round(e.recovery.within * q.triggerS, 6);
    const c = ctmcBeside(e, q.offeredPerS, deadlineS, k);
    return {
      sweep: q.sweep,
      point: q.point,
      offeredPerS: q.offeredPerS,
      triggerS: q.triggerS,
      deadlineS,
      labVerdict: q.verdict,
      ctmc: c,
      ctmcVerdict:
        c.pRecoveredWithin === null ? null : c.pRecoveredWithin >= 0.5 ? 'recovered' : 'metastable',
    };
  });
}

export function ctmcAtLabLines(rows: readonly CtmcAtLabPoint[]): string[] {
  return [
    '### The lab points beside the Markov model',
    '',
    'Each lab point with the CTMC’s mean recovery time from a full server and its probability of recovering within the point’s recovery deadline (recovered when it is ½ or more).',
    '',
    '| sweep | point | offered load (origins/s) | trigger (s) | deadline (s) | lab | CTMC mean recovery | P(recovered within deadline) | CTMC verdict |',
    '|---|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.sweep} | ${r.point} | ${round(r.offeredPerS, 3)} | ${r.triggerS} | ${r.deadlineS} | ${r.labVerdict} | ${describeTime(r.ctmc.recoveryS, r.ctmc.resolvableS)} | ${r.ctmc.pRecoveredWithin === null ? 'not computed' : round(r.ctmc.pRecoveredWithin, 3)} | ${r.ctmcVerdict ?? '–'}${r.ctmcVerdict !== null && r.ctmcVerdict !== r.labVerdict ? ' ✗' : ''} |`,
    ),
  ];
}
