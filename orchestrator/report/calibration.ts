import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describeDuration } from '../../foundation/distributions.js';
import type { CalibrationResult } from '../calibrate/result.js';
import { BenchError } from '../../foundation/errors.js';
import { toDurationDist } from '../../foundation/fields.js';
import { dataFilesOf, type OutFile } from './exports.js';
import { document, rounded, timeLinesLayer, type Figure, type Row } from './figures/common.js';
import { stepFigures } from './figures/step.js';
import { renderHtml } from './html.js';
import { numbers, parseTimeseries, type Manifest, type Timeseries } from './load.js';
import { lat, topologyLine, type Section } from './markdown.js';
import { isStepTable, type StepTable } from './tables.js';
import type { VlSpec } from './svg.js';
import { describeSystem } from '../spec/sections/system.js';
import { describeWorkers } from '../spec/plan.js';

/**
 * The report of a calibration folder (`metabench calibrate`): what ran, the result
 * (saturation point, margin against the production peak, goodput at 150% of the
 * saturation point), every step with its judgement, the step figures from steps.json
 * and the step test over time from timeseries.csv. Made from the folder's files alone,
 * like every report, so `metabench report DIR` renders it again.
 */
export interface CalibrationData {
  readonly result: CalibrationResult;
  readonly steps: StepTable;
  readonly manifest: Manifest;
  readonly series: Timeseries;
}

/** A folder `metabench calibrate` wrote (calibration.json, and no run-<i>/ of an experiment). */
export function isCalibrationDir(dir: string): boolean {
  return existsSync(join(dir, 'calibration.json')) && !readdirSync(dir).some((n) => /^run-\d+$/.test(n));
}

export function loadCalibration(dir: string): CalibrationData {
  const read = <T>(name: string): T => {
    try {
      return JSON.parse(readFileSync(join(dir, name), 'utf8')) as T;
    } catch (err) {
      throw new BenchError('E_USAGE', `cannot read ${join(dir, name)}: ${(err as Error).message}`);
    }
  };
  const steps = read<unknown>('steps.json');
  if (!isStepTable(steps))
    throw new BenchError(
      'E_USAGE',
      `${join(dir, 'steps.json')} is not a step table (see orchestrator/report/tables.ts)`,
    );
  const csv = join(dir, 'timeseries.csv');
  return {
    result: read<CalibrationResult>('calibration.json'),
    steps,
    manifest: read<Manifest>('manifest.json'),
    series: parseTimeseries(existsSync(csv) ? readFileSync(csv, 'utf8') : ''),
  };
}

export function calibrationFigures(c: CalibrationData): Figure[] {
  return [...stepFigures(c.steps), ...timeFigures(c)];
}

export function calibrationSections(c: CalibrationData, figures: readonly Figure[]): Section[] {
  const r = c.result;
  const m = c.manifest;
  const e = m.experiment;
  const sections: Section[] = [];
  const section = (id: string, title: string, lines: readonly string[], figs: readonly Figure[] = []) =>
    sections.push({ id, title, body: lines.join('\n'), figures: figs });

  section('header', `${r.experiment}: step test`, [
    `The capacity of this lab on this machine, measured by \`metabench calibrate\`.`,
    '',
    '| | |',
    '|---|---|',
    `| date | ${m.startedAt} |`,
    `| machine | ${m.machine.cpuModel}, ${m.machine.cpus} cores, ${(m.machine.memoryBytes / 2 ** 30).toFixed(1)} GiB |`,
    `| OS | ${m.machine.os} |`,
    `| Node | ${m.machine.node} |`,
    `| runtime | ${m.runtime} |`,
    `| lab topology | ${topologyLine(m.topology)} |`,
    `| seed | ${r.seed} |`,
    `| scale | ${r.scale} |`,
    `| git revision | ${m.gitRevision ?? 'unknown'} |`,
  ]);

  if (r.warnings.length || !r.usable)
    section('warnings', 'Warnings', [
      ...(!r.usable
        ? ['> **This step test is unusable**: it was interrupted; its figures are not results.', '']
        : []),
      ...r.warnings.map((w) => `> ⚠ ${w}  `),
    ]);

  section('what-ran', 'What ran', [
    e.lab
      ? `- **Lab**: api with ${describeWorkers(e)}, ${e.lab.api.queue.toUpperCase()} queue, work ${describeDuration(toDurationDist(e.lab.api.work))}; nominal capacity ${r.nominalCapacityPerS} req/s.`
      : `- **System**: ${describeSystem(e.system!)}; no nominal capacity (its work is its own).`,
    `- **Load**: ${r.load.description}.`,
    `- **Client**: ${r.client} (the experiment's timeout and deadline; no retries, hedging, budget, breaker, throttling or abandonment: the step test measures the system against the load offered to it).`,
    `- **Steps**: ${r.plan.ladderPerS.join(', ')} req/s, each ${r.plan.stepS} s of which the first ${r.plan.settleS} s settle and are not measured; each step starts once the api has no request queued or running; then up to ${r.plan.refine} bisection${r.plan.refine === 1 ? '' : 's'} above the saturation step, then one step at 150% of the saturation point.`,
    `- **Rule**: ${r.rule.definition}; tolerance ${pct(r.rule.tolerance)}, latency factor ${r.rule.latencyFactor} (reference p99 ${r.referenceP99Ms === null ? 'unmeasured' : `${r.referenceP99Ms} ms`}).`,
  ]);

  section('result', 'Result', resultLines(r));

  const judged = (s: CalibrationResult['steps'][number]): string =>
    s.sustained === null
      ? 'not judged (150% probe)'
      : s.sustained
        ? 'sustained'
        : `**not sustained**: ${s.why.join('; ')}`;
  section(
    'steps',
    'Steps',
    [
      'In the order they ran; offered, goodput and latency over each step after its settling time.',
      '',
      '| step | kind | rate | offered/s | goodput/s | goodput/offered | p50 | p99 | failed | late sends | judgement |',
      '|---|---|---|---|---|---|---|---|---|---|---|',
      ...r.steps.map(
        (s) =>
          `| ${s.index} | ${s.kind} | ${s.ratePerS}/s | ${s.offeredPerS ?? 'unmeasured'} | ${s.goodputPerS ?? 'unmeasured'} | ${s.goodputRatio === null ? '–' : pct(s.goodputRatio)} | ${lat(s.latencyMs, 'p50')} | ${lat(s.latencyMs, 'p99')} | ${failures(s.failures)} | ${s.lateSends} | ${judged(s)} |`,
      ),
      ...classLines(r),
    ],
    figures,
  );
  return sections;
}

function resultLines(r: CalibrationResult): string[] {
  const out: string[] = [];
  if (r.saturation)
    out.push(
      `- **Saturation point: ${r.saturation.offeredPerS} req/s** offered (measured ${r.saturation.measuredOfferedPerS ?? '–'}/s), goodput ${r.saturation.goodputPerS ?? 'unmeasured'} req/s, p99 ${r.saturation.p99Ms ?? 'unmeasured'} ms: ${r.reason}.`,
    );
  else
    out.push(
      `- **No saturation point**: ${r.reason}.${r.bound?.atLeastPerS !== undefined ? ` The capacity is at least ${r.bound.atLeastPerS} req/s: add higher steps (--steps).` : ''}${r.bound?.belowPerS !== undefined ? ` The capacity is below ${r.bound.belowPerS} req/s: add lower steps (--steps).` : ''}`,
    );
  out.push(
    `- **Margin against the production peak**: ${r.margin.ratio !== null ? `**${r.margin.ratio}x** (${r.margin.note})` : r.margin.note}.`,
  );
  if (r.overload)
    out.push(
      `- **Goodput at 150% of saturation** (${r.overload.offeredPerS} req/s offered): **${r.overload.goodputPerS ?? 'unmeasured'} req/s**, ${r.overload.ofSaturationGoodput === null ? 'unmeasured' : pct(r.overload.ofSaturationGoodput)} of the goodput at saturation (${r.overload.ofOffered === null ? '–' : pct(r.overload.ofOffered)} of what was offered), p99 ${r.overload.p99Ms ?? 'unmeasured'} ms; failed: ${failures(r.overload.failures)}.`,
    );
  else out.push(`- **Goodput at 150% of saturation**: unmeasured (${r.overloadNote ?? 'not run'}).`);
  if (r.peakGoodput)
    out.push(
      `- **Peak goodput**: ${r.peakGoodput.goodputPerS} req/s, at the ${r.peakGoodput.offeredPerS} req/s step.`,
    );
  out.push(
    'file' in r.stored
      ? `- **Stored** as the measured capacity of this lab configuration on this machine: \`${r.stored.file}\`; later runs resolve \`% capacity\` against it.`
      : `- **Not stored**: ${(r.stored as { notStored: string }).notStored}.`,
  );
  return out;
}

function classLines(r: CalibrationResult): string[] {
  const names = Object.keys(r.steps[0]?.classes ?? {});
  if (names.length === 0) return [];
  return [
    '',
    'Per request class:',
    '',
    `| step | rate | ${names.map((n) => `${n} goodput/s | ${n} p99`).join(' | ')} |`,
    `|---|---|${names.map(() => '---|---').join('|')}|`,
    ...r.steps.map(
      (s) =>
        `| ${s.index} | ${s.ratePerS}/s | ${names
          .map((n) => {
            const c = s.classes?.[n];
            return c ? `${c.goodputPerS ?? 'unmeasured'} | ${lat(c.latencyMs, 'p99')}` : '– | –';
          })
          .join(' | ')} |`,
    ),
  ];
}

/** The step test over time: offered and goodput, and response time, per second; each measured window shaded. */
function timeFigures(c: CalibrationData): Figure[] {
  const ts = c.series;
  if (ts.rows === 0) return [];
  const t = numbers(ts, 't_s');
  const rows = (defs: { label: string; values: (number | null)[] }[]): Row[] =>
    defs.flatMap((d) => d.values.map((v, i) => ({ t_s: t[i] ?? i, series: d.label, value: rounded(v) })));
  const windows: VlSpec = {
    data: {
      values: c.result.steps.map((s) => ({ start: s.measureFromS, end: s.endS, label: `${s.ratePerS}/s` })),
    },
    mark: { type: 'rect', color: '#dddddd', opacity: 0.5 },
    encoding: { x: { field: 'start', type: 'quantitative' }, x2: { field: 'end' } },
  };
  const domainS: [number, number] = [0, (t.at(-1) ?? 0) + 1];
  const fig = (
    id: string,
    title: string,
    caption: string,
    defs: { label: string; values: (number | null)[] }[],
    yTitle: string,
    log = false,
  ): Figure | null => {
    if (!defs.some((d) => d.values.some((v) => v !== null))) return null;
    const data = rows(defs);
    const labels = defs.map((d) => d.label);
    return {
      id,
      title,
      caption,
      data,
      series: labels,
      spec: document(title, { layer: [windows, timeLinesLayer(data, labels, yTitle, { domainS, log })] }),
    };
  };
  return [
    fig(
      'steps-throughput',
      'Offered load and goodput over the step test',
      "Origins offered (by intended time) and goodput (successes within the deadline, by completion time) per second; each step's measurement window is shaded; between steps the api drains.",
      [
        { label: 'offered', values: numbers(ts, 'offered') },
        { label: 'goodput', values: numbers(ts, 'goodput') },
      ],
      'requests per second (req/s)',
    ),
    fig(
      'steps-response',
      'Response time over the step test',
      "Response time p50 and p99 of the successes in each second, log scale; each step's measurement window is shaded.",
      [
        { label: 'p50', values: numbers(ts, 'response_p50_ms') },
        { label: 'p99', values: numbers(ts, 'response_p99_ms') },
      ],
      'response time (ms, log scale)',
      true,
    ),
  ].filter((f): f is Figure => f !== null);
}

/** Every file of a calibration folder's report. */
export async function calibrationReportFiles(
  c: CalibrationData,
  svgFiles: (figs: readonly Figure[]) => Promise<OutFile[]>,
): Promise<OutFile[]> {
  const figs = calibrationFigures(c);
  const sections = calibrationSections(c, figs);
  const md: string[] = [];
  sections.forEach((s, i) => {
    md.push(`${i === 0 ? '#' : '##'} ${s.title}`, '', s.body, '');
    for (const f of s.figures) md.push(`![${f.title}](figures/${f.id}.svg)`, '', `*${f.caption}*`, '');
  });
  return [
    { path: 'report.md', content: md.join('\n') },
    { path: 'report.html', content: renderHtml(`${c.result.experiment}: step test`, sections) },
    ...(await svgFiles(figs)),
    ...dataFilesOf({ steps: c.steps, figures: figs }),
  ];
}

/** Clears the derived folders of an older rendering. */
export function clearDerived(dir: string): void {
  rmSync(join(dir, 'figures'), { recursive: true, force: true });
  rmSync(join(dir, 'data'), { recursive: true, force: true });
}

function failures(f: Record<string, number | undefined>): string {
  const e = Object.entries(f).filter(([, n]) => (n ?? 0) > 0);
  return e.length ? e.map(([k, n]) => `${k} ${n}`).join(', ') : 'none';
}

function pct(x: number): string {
  return `${Math.round(x * 10000) / 100}%`;
}
