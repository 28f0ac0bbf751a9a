import { describeTriggers } from '../spec/sections/schedule.js';
import { describeSystem } from '../spec/sections/system.js';
import { describeWorkers } from '../spec/plan.js';
import { basename, resolve } from 'node:path';
import { mean } from 'simple-statistics';
import type { LatencySummary } from '../../bench/record/histogram.js';
import type { RunSummary, WindowSummary } from '../analysis/summary.js';
import { formatDuration } from '../../foundation/units.js';
import {
  annotationLayers,
  document,
  rounded,
  seriesEncoding,
  TIME_AXIS,
  triggerLayers,
  triggerNote,
  type Figure,
  type Row,
} from './figures/common.js';
import { renderHtml } from './html.js';
import { loadResults, numbers, type ResultsData } from './load.js';
import { lat, topologyLine, type Section } from './markdown.js';
import { dataFiles } from './exports.js';
import { svgFiles, writeFiles } from './writeReport.js';
import { runWarnings } from './warnings.js';
import { describeTally, isValid, tallyOutcomes } from '../analysis/tally.js';
import { recoveryCell, triggerReached } from './outcome.js';
import { differences, sideNames } from './differences.js';

interface Side {
  /** The legend's name: "A: " and the setup it differs in (or its folder's name). */
  readonly label: string;
  readonly folder: string;
  /** The fields its setup differs in, with its values; null when the two setups are the same. */
  readonly differs: string | null;
  readonly data: ResultsData;
}

/**
 * The two sides, each named in legends by the fields its setup differs in from the
 * other's (read from their manifests: `A: client.retry.maxAttempts=4` against `B:
 * client.retry.maxAttempts=1`), by its folder's name when the setups are the same.
 */
export function compareSides(
  a: { folder: string; data: ResultsData },
  b: { folder: string; data: ResultsData },
): [Side, Side] {
  const names = sideNames(differences(a.data.runs[0]!.manifest, b.data.runs[0]!.manifest));
  return [
    { ...a, differs: names?.[0] ?? null, label: `A: ${names?.[0] ?? a.folder}` },
    { ...b, differs: names?.[1] ?? null, label: `B: ${names?.[1] ?? b.folder}` },
  ];
}

/**
 * `metabench compare A B`: a side-by-side report of two results folders (compare.md,
 * compare.html, figures/ and data/ in `out`): the setups, the baseline and after-trigger
 * figures with their sample counts, each side's warnings, the verdicts last, and the
 * two sides overlaid over time (the mean across runs, second by second).
 */
export async function writeComparison(dirA: string, dirB: string, out: string): Promise<void> {
  const [a, b] = compareSides(
    { folder: basename(resolve(dirA)), data: loadResults(dirA) },
    { folder: basename(resolve(dirB)), data: loadResults(dirB) },
  );
  const sections = compareSections(a, b);
  const figs = sections.flatMap((s) => s.figures);
  writeFiles(out, [
    { path: 'compare.md', content: compareMarkdown(sections) },
    {
      path: 'compare.html',
      content: renderHtml(`${a.data.experiment.name} vs ${b.data.experiment.name}`, sections),
    },
    ...(await svgFiles(figs)),
    ...dataFiles({ ...a.data, sweep: null, steps: null, runs: [] }, figs).filter((f) =>
      f.path.startsWith('figures/'),
    ),
  ]);
}

export function compareMarkdown(sections: readonly Section[]): string {
  const out: string[] = [];
  sections.forEach((s, i) => {
    out.push(`${i === 0 ? '#' : '##'} ${s.title}`, '', s.body, '');
    for (const f of s.figures) out.push(`![${f.title}](figures/${f.id}.svg)`, '', `*${f.caption}*`, '');
  });
  return out.join('\n');
}

function row(name: string, va: string, vb: string): string {
  return `| ${name} | ${va} | ${vb} |`;
}

function both(a: Side, b: Side, name: string, f: (d: ResultsData) => string): string {
  return row(name, f(a.data), f(b.data));
}

/** A run-level figure: the single run's value, or each run's, comma-separated. */
function perRun(d: ResultsData, f: (s: RunSummary) => string): string {
  return d.runs.map((r) => f(r.summary)).join(', ');
}

export function compareSections(a: Side, b: Side): Section[] {
  const head = [
    '| | A | B |',
    '|---|---|---|',
    row('folder', a.folder, b.folder),
    row('differs in', a.differs ?? 'nothing: the same setup', b.differs ?? 'nothing: the same setup'),
  ];
  const m = (d: ResultsData) => d.runs[0]!.manifest;
  const e = (d: ResultsData) => d.experiment;
  const sections: Section[] = [];
  sections.push({
    id: 'header',
    title: `Comparison: ${a.data.experiment.name} vs ${b.data.experiment.name}`,
    body: [
      ...head,
      both(a, b, 'experiment', (d) => e(d).name),
      both(a, b, 'date', (d) => m(d).startedAt),
      both(a, b, 'machine', (d) => `${m(d).machine.cpuModel}, ${m(d).machine.cpus} cores`),
      both(a, b, 'Node', (d) => m(d).machine.node),
      both(a, b, 'runtime', (d) => m(d).runtime),
      both(a, b, 'lab topology', (d) => topologyLine(m(d).topology)),
      both(a, b, 'seed', (d) => String(e(d).seed)),
      both(a, b, 'scale', (d) => String(m(d).scale)),
      both(a, b, 'repetitions', (d) => String(d.runs.length)),
      both(a, b, 'git revision', (d) => m(d).gitRevision ?? 'unknown'),
    ].join('\n'),
    figures: [],
  });
  const warn = (s: Side) =>
    s.data.runs.flatMap((r) =>
      runWarnings(r.summary).map((w) => `> ⚠ ${s.label.slice(0, 1)}, run ${r.index}: ${w}  `),
    );
  const warnings = [...warn(a), ...warn(b)];
  if (warnings.length)
    sections.push({ id: 'warnings', title: 'Warnings', body: warnings.join('\n'), figures: [] });
  sections.push({
    id: 'what-ran',
    title: 'What ran',
    body: [
      ...head,
      both(a, b, 'lab', (d) => {
        const lab = e(d).lab;
        return lab
          ? `api ${describeWorkers(e(d))}, ${lab.api.queue} queue, work ${lab.api.work.dist} ${formatDuration(lab.api.work.mean)}`
          : describeSystem(e(d).system!);
      }),
      both(a, b, 'load', (d) => `${e(d).load.arrival}, ${d.runs[0]!.summary.offeredPerS} req/s`),
      both(a, b, 'client', (d) => {
        const c = e(d).client;
        return `timeout ${formatDuration(c.timeout)}, retry ${c.retry.policy}${c.retry.policy !== 'none' ? ` ×${c.retry.maxAttempts}` : ''}, deadline ${c.deadline !== undefined ? formatDuration(c.deadline) : 'none'}`;
      }),
      both(a, b, 'trigger', (d) => describeTriggers(e(d).schedule.triggers, m(d).scale)),
    ].join('\n'),
    figures: [],
  });
  const win = (name: string, pick: (s: RunSummary) => WindowSummary): string =>
    [
      ...head,
      ...(
        [
          ['goodput/s', (w) => String(w.goodputPerS ?? 'unmeasured')],
          ['amplification (client)', (w) => String(w.amplification ?? 'unmeasured')],
          ['amplification (server)', (w) => String(w.amplificationServer ?? 'unmeasured')],
          ['p50', (w) => lat(w.latencyMs as LatencySummary, 'p50')],
          ['p99', (w) => lat(w.latencyMs as LatencySummary, 'p99')],
        ] as const satisfies readonly (readonly [string, (w: WindowSummary) => string])[]
      ).map(([label, f]) => both(a, b, `${name} ${label}`, (d) => perRun(d, (s) => f(pick(s))))),
    ].join('\n');
  sections.push({
    id: 'baseline',
    title: 'Steady state (baseline)',
    body: win('baseline', (s) => s.baseline),
    figures: [],
  });
  sections.push({
    id: 'after-trigger',
    title: 'After the trigger',
    body: [
      win('after', (s) => s.afterTrigger),
      both(a, b, 'recovery time', (d) =>
        perRun(d, (s) => (triggerReached(s) ? recoveryCell(s) : 'trigger not reached')),
      ),
    ].join('\n'),
    figures: compareFigures(a, b),
  });
  sections.push({
    id: 'verdicts',
    title: 'Verdicts',
    body: [
      ...head,
      both(a, b, 'outcome', (d) =>
        d.runs.length > 1
          ? describeTally(tallyOutcomes(d.runs.map((r) => r.summary)))
          : perRun(d, (s) => (isValid(s) ? `**${s.outcome}**` : '**invalid** (no verdict)')),
      ),
      both(a, b, 'hypothesis', (d) =>
        perRun(
          d,
          (s) =>
            s.hypothesis
              .map(
                (h) =>
                  `${h.class !== undefined ? `${h.class} ` : ''}${h.metric}${h.window === 'afterRecovery' ? ' after recovery' : ''} ${h.verdict} (n=${h.samples})`,
              )
              .join('; ') || 'none declared',
        ),
      ),
      both(a, b, 'usable', (d) => perRun(d, (s) => (s.usable ? 'yes' : '**no**'))),
    ].join('\n'),
    figures: [],
  });
  return sections;
}

/** Mean across a side's runs, second by second. */
function meanSeries(d: ResultsData, column: string): Map<number, number> {
  const byT = new Map<number, number[]>();
  for (const r of d.runs) {
    const t = numbers(r.series, 't_s');
    numbers(r.series, column).forEach((v, i) => {
      if (v !== null) byT.set(t[i] ?? i, [...(byT.get(t[i] ?? i) ?? []), v]);
    });
  }
  return new Map([...byT.entries()].sort((x, y) => x[0] - y[0]).map(([t, vs]) => [t, mean(vs)]));
}

function compareFigures(a: Side, b: Side): Figure[] {
  const mk = (column: string, name: string, title: string, yTitle: string, log = false): Figure => {
    const labels = [a.label, b.label];
    const data: Row[] = [];
    for (const s of [a, b])
      for (const [t, v] of meanSeries(s.data, column))
        data.push({ t_s: t, series: s.label, value: rounded(v) });
    const ta = a.data.runs[0]!.summary.trigger;
    const tb = b.data.runs[0]!.summary.trigger;
    const same = Math.abs(ta.startS - tb.startS) < 0.5 && Math.abs(ta.endS - tb.endS) < 0.5;
    const domain = [0, Math.max(0, ...data.map((r) => r['t_s'] as number)) + 1] as const;
    return {
      id: `compare-${name}`,
      title,
      caption: `${title}: each side's mean across its runs, per second; the trigger window${same ? '' : 's'} shaded.`,
      data,
      series: labels,
      spec: document(title, {
        layer: [
          ...triggerLayers(ta),
          ...(same ? [] : triggerLayers(tb)),
          ...annotationLayers(
            same
              ? triggerNote(ta)
              : [
                  { x: ta.startS, label: 'trigger A' },
                  { x: tb.startS, label: 'trigger B' },
                ],
            domain,
          ),
          {
            data: { values: data },
            mark: { type: 'line', invalid: 'break-paths-show-domains' },
            params: [{ name: 'zoom', select: 'interval', bind: 'scales' }],
            encoding: {
              x: { field: 't_s', type: 'quantitative', title: TIME_AXIS, scale: { domain, nice: false } },
              y: {
                field: 'value',
                type: 'quantitative',
                title: yTitle,
                ...(log ? { scale: { type: 'log' } } : {}),
              },
              ...seriesEncoding(labels),
              tooltip: [
                { field: 't_s', type: 'quantitative', title: 'time (s)' },
                { field: 'series', type: 'nominal' },
                { field: 'value', type: 'quantitative', title: yTitle },
              ],
            },
          },
        ],
      }),
    };
  };
  return [
    mk('goodput', 'goodput', 'Goodput, A and B', 'goodput (req/s)'),
    mk(
      'amplification_client',
      'amplification',
      'Client-side amplification, A and B',
      'amplification (attempts per origin)',
    ),
    mk(
      'response_p99_ms',
      'latency-p99',
      'Response time p99, A and B',
      'response time p99 (ms, log scale)',
      true,
    ),
  ];
}
