import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BenchError } from '../../../foundation/errors.js';
import type { CalibrationPlan } from '../../calibrate/runCalibration.js';
import type { CalibrationResult } from '../../calibrate/result.js';
import { describeClient } from '../../run/client.js';
import type { ClientSpec } from '../../spec/sections/client.js';
import type { Experiment } from '../../spec/schema.js';
import type { RunManifest } from '../manifest.js';
import { labParagraph, machineParagraph } from './methods.js';
import { table, type TexTable } from './tables.js';
import { count, duration, exact, num, si, tex } from './tex.js';

/**
 * A calibration folder (`metabench calibrate`) as LaTeX: the step ladder (tables/steps.tex),
 * the capacity it found and by which rule (tables/capacity.tex), and the methods of the
 * step test, from calibration.json and manifest.json alone. Declared rates (the steps', the
 * saturation point, which is a step's rate) print every digit; measured values three
 * significant figures.
 */

/** What the export reads from a calibration folder's manifest.json (runCalibration.ts writes it). */
export interface CalibrationManifest extends Pick<
  RunManifest,
  'metabench' | 'gitRevision' | 'machine' | 'runtime' | 'topology' | 'seed' | 'scale'
> {
  readonly kind: 'calibration';
  readonly calibration: CalibrationPlan & { readonly client: ClientSpec };
  readonly experiment: Experiment;
}

export interface CalibrationFolder {
  readonly manifest: CalibrationManifest;
  readonly result: CalibrationResult;
}

function readJson(file: string): Record<string, unknown> {
  if (!existsSync(file)) throw new BenchError('E_USAGE', `${file}: missing`);
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch (err) {
    throw new BenchError('E_USAGE', `${file}: not JSON (${(err as Error).message})`);
  }
}

/** DIR/manifest.json and DIR/calibration.json, checked for the fields the export reads. */
export function readCalibrationFolder(dir: string): CalibrationFolder {
  const mFile = join(dir, 'manifest.json');
  const m = readJson(mFile);
  if (m.kind !== 'calibration') throw new BenchError('E_USAGE', `${mFile}: kind: not "calibration"`);
  for (const key of ['metabench', 'runtime', 'seed', 'scale', 'calibration', 'experiment'])
    if (m[key] === undefined || m[key] === null) throw new BenchError('E_USAGE', `${mFile}: ${key}: missing`);
  const cFile = join(dir, 'calibration.json');
  const c = readJson(cFile);
  for (const key of ['steps', 'plan', 'rule', 'status', 'reason', 'nominalCapacityPerS', 'margin'])
    if (c[key] === undefined || c[key] === null) throw new BenchError('E_USAGE', `${cFile}: ${key}: missing`);
  if (!Array.isArray(c.steps)) throw new BenchError('E_USAGE', `${cFile}: steps: not a list`);
  return {
    manifest: { ...(m as unknown as CalibrationManifest), gitRevision: (m.gitRevision as string) ?? null },
    result: c as unknown as CalibrationResult,
  };
}

const perS = (x: number): string => exact(x, '\\per\\second');
const yesNo = (b: boolean | null): string => (b === null ? '--' : b ? 'yes' : 'no');

export function calibrationTables(name: string, c: CalibrationResult): TexTable[] {
  const n = tex(name);
  const steps = table(
    'steps',
    `${n}: the step test, each step in the order it ran (ladder, then refining bisections, then the overload probe at 150\\% of the saturation point, which is not judged). Rate is the step's declared rate; offered, goodput and the percentiles are over the step after its settling time; $n$ is the latency samples behind the percentiles.`,
    ['Step', 'Kind', 'Rate', 'Offered', 'Goodput', 'Goodput', 'p50', 'p99', '$n$', 'Sustained'],
    c.steps.map((s) => [
      String(s.index),
      tex(s.kind),
      count(s.ratePerS),
      num(s.offeredPerS),
      num(s.goodputPerS),
      num(s.goodputRatio),
      num(s.latencyMs.p50),
      num(s.latencyMs.p99),
      count(s.latencyMs.samples),
      yesNo(s.sustained),
    ]),
    {
      units: [
        '',
        '',
        '(\\si{\\per\\second})',
        '(\\si{\\per\\second})',
        '(\\si{\\per\\second})',
        '/ offered',
        '(\\si{\\milli\\second})',
        '(\\si{\\milli\\second})',
        '',
        '',
      ],
    },
  );

  const rows: string[][] = [['Status', tex(c.status)]];
  if (c.saturation) {
    const s = c.saturation;
    rows.push(
      ['Capacity (saturation point)', perS(s.offeredPerS)],
      [
        'Offered at capacity, measured',
        s.measuredOfferedPerS === null ? '--' : si(s.measuredOfferedPerS, '\\per\\second'),
      ],
      ['Goodput at capacity', s.goodputPerS === null ? '--' : si(s.goodputPerS, '\\per\\second')],
      ['p99 at capacity', s.p99Ms === null ? '--' : si(s.p99Ms, '\\milli\\second')],
    );
  }
  if (c.bound?.atLeastPerS !== undefined) rows.push(['Capacity at least', perS(c.bound.atLeastPerS)]);
  if (c.bound?.belowPerS !== undefined) rows.push(['Capacity below', perS(c.bound.belowPerS)]);
  rows.push(
    ['Rule: goodput tolerance', exact(c.rule.tolerance * 100, '\\percent')],
    ['Rule: p99 factor', count(c.rule.latencyFactor)],
    [
      'Reference p99 (lowest step)',
      c.referenceP99Ms === null ? '--' : si(c.referenceP99Ms, '\\milli\\second'),
    ],
    ['Nominal capacity', c.nominalCapacityPerS === null ? '--' : perS(c.nominalCapacityPerS)],
  );
  if (c.peakGoodput)
    rows.push(
      ['Peak goodput', si(c.peakGoodput.goodputPerS, '\\per\\second')],
      ['Peak goodput at', perS(c.peakGoodput.offeredPerS)],
    );
  if (c.margin.productionPeakPerS !== null) {
    rows.push(['Production peak (declared)', perS(c.margin.productionPeakPerS)]);
    if (c.margin.ratio !== null) rows.push(['Margin (capacity / peak)', count(c.margin.ratio)]);
  }
  if (c.overload) {
    const o = c.overload;
    rows.push(
      ['Overload probe at', perS(o.offeredPerS)],
      ['Goodput at the probe', o.goodputPerS === null ? '--' : si(o.goodputPerS, '\\per\\second')],
      ['Probe goodput / goodput at capacity', num(o.ofSaturationGoodput)],
      ['Probe goodput / offered', num(o.ofOffered)],
      ['p99 at the probe', o.p99Ms === null ? '--' : si(o.p99Ms, '\\milli\\second')],
    );
  }
  const capacity = table(
    'capacity',
    `${n}: the capacity the step test found and the rule that found it. A step is sustained when its goodput is at least $(1 - \\mathrm{tolerance})$ of what it offered and its p99 at most the p99 factor times the lowest step's p99; the saturation point is the highest sustained step with no sustained step above it.`,
    ['Quantity', 'Value'],
    rows,
  );
  return [steps, capacity];
}

export function calibrationMethodsTex(f: CalibrationFolder): string {
  const { manifest: m, result: c } = f;
  const plan = m.calibration;
  const kinds = (k: string) => c.steps.filter((s) => s.kind === k);
  const refined = kinds('refine');
  const overload = kinds('overload');
  const backlog = c.steps.filter((s) => s.backlogAtStart > 0);
  const paragraphs = [
    machineParagraph(m, 'step test'),
    labParagraph(m.experiment, m.topology),
    `\\paragraph{Step test.} The offered load rose in steps of a flat open-loop rate with ${tex(c.load.arrival)} arrivals: a ladder of ${plan.ladderPerS.length} steps at ${plan.ladderPerS.map((r) => count(r)).join(', ')} requests per second, each lasting ${duration(plan.stepMs)}, of which the first ${duration(plan.settleMs)} settled and was not measured. ` +
      `Each step started on a whole second once the api had no request queued or running${
        backlog.length
          ? `, except step${backlog.length > 1 ? 's' : ''} ${backlog.map((s) => s.index).join(', ')}, which started with requests left over (the drain gave up)`
          : ''
      }. ` +
      `After the ladder, up to ${plan.refine} bisection${plan.refine === 1 ? '' : 's'} between the saturation step and the step above it (${refined.length} ran${refined.length ? `: ${refined.map((s) => exact(s.ratePerS, '\\per\\second')).join(', ')}` : ''}), ` +
      (overload.length
        ? `then one step at 150\\% of the saturation point, ${exact(overload[0]!.ratePerS, '\\per\\second')}.`
        : 'and no overload probe (no saturation point).'),
    `\\paragraph{Client.} The step test measures the lab against the load offered to it, so its client (${tex(describeClient(plan.client))}) replaced the experiment's (${tex(describeClient(m.experiment.client))}).`,
    `\\paragraph{Saturation rule.} A step was sustained when its goodput was at least ${exact((1 - c.rule.tolerance) * 100, '\\percent')} of the rate it offered and its p99 at most ${c.rule.latencyFactor} times the p99 of the lowest step (${c.referenceP99Ms === null ? 'not measured' : si(c.referenceP99Ms, '\\milli\\second')}), both over the step after its settling time. The saturation point, the capacity, is the highest sustained step with no sustained step above it. Here: ${tex(c.reason)}.`,
    `\\paragraph{Seed and scale.} The seed was ${m.seed}; the step lengths above are as scaled by ${+m.scale.toFixed(6)}.${c.nominalCapacityPerS === null ? ' The system under test was your own (system:): it has no nominal capacity.' : ` The lab's nominal capacity (api workers over the mean work) was ${perS(c.nominalCapacityPerS)}.`}`,
  ];
  return `${paragraphs.join('\n\n')}\n`;
}
