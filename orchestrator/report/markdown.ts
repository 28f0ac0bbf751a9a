import { hypothesisValue, sig3, withUnit } from './numbers.js';
import { describeTriggers, triggerWindowMs } from '../spec/sections/schedule.js';
import type { LatencySummary } from '../../bench/record/histogram.js';
import { describeDuration } from '../../foundation/distributions.js';
import type { Distribution } from '../analysis/aggregate.js';
import type { RunSummary, WindowSummary } from '../analysis/summary.js';
import { describeClient } from '../run/client.js';
import { describeLoad } from '../spec/loadPlan.js';
import { describeWorkers } from '../spec/plan.js';
import type { Figure } from './figures/common.js';
import { TWIN_DIR, type ResultsData } from './load.js';
import type { StepTable, SweepTable } from './tables.js';
import { classLines, classVerdictLines } from './classes.js';
import { runWarnings } from './warnings.js';
import { describeTally, isValid, tallyOutcomes } from '../analysis/tally.js';
import { latenessLines } from './lateness.js';
import { DEFAULT_STEADY_STATE } from '../analysis/steadyState.js';
import { notReachedLine, outcomeLead, recoveryCell, triggerReached, validityLines } from './outcome.js';
import { ctmcBeside } from '../analysis/markov/experiment.js';
import { round } from '../../foundation/round.js';
import { compareByLevels, numericLevels } from '../analysis/levels.js';
import { twoFactorEffects } from '../analysis/effects.js';
import { pointStat } from './figures/sweep.js';
import { sensitivityLines } from './sensitivity.js';
import { machineLines } from './machine.js';
import { sweepLead } from './sweepLead.js';
import { describeSystem } from '../spec/sections/system.js';
import type { LabSection } from '../spec/sections/lab.js';

/** One section of the report: the same in report.md and report.html. */
export interface Section {
  readonly id: string;
  /** Heading text; the first section is the title (level 1), the others level 2. */
  readonly title: string;
  /** Markdown body, without the heading and without the figures. */
  readonly body: string;
  /** Figures shown at the end of the section (images in report.md, interactive charts in report.html). */
  readonly figures: readonly Figure[];
}

/** The figures of a report, by where they go. */
export interface ReportFigures {
  readonly runs: readonly Figure[];
  readonly sweep: readonly Figure[];
  readonly steps: readonly Figure[];
}

const NO_FIGURES: ReportFigures = { runs: [], sweep: [], steps: [] };

/**
 * The report, in the order a reader asks (seeds/002): the outcome first, in one sentence
 * with its evidence (or, for an invalid run, the validity checks it failed and that no
 * verdict is given), then what ran, the steady state, what happened after the trigger,
 * how far to trust the measurement, and the verdicts with their sample counts last.
 * Warnings follow the header. Every
 * percentile carries its sample count; a window without samples says "unmeasured".
 * Made only from the results folder's files, so it renders the same anywhere.
 */
export function reportSections(x: ResultsData, figs: ReportFigures = NO_FIGURES): Section[] {
  const e = x.experiment;
  const m = x.runs[0]!.manifest;
  const runs = x.runs.map((r) => r.summary);
  const first = runs[0]!;
  const many = runs.length > 1;
  const sections: Section[] = [];
  const section = (id: string, title: string, lines: readonly string[], figures: readonly Figure[] = []) =>
    sections.push({ id, title, body: lines.join('\n'), figures });

  const simulated = m.runtime === 'sim';
  section('header', reportTitle(x), [
    ...(x.sweep ? sweepHead(x) : outcomeLead(x.runs, x.twin)),
    ...(e.description ? [e.description, ''] : []),
    ...(simulated
      ? [
          '> **Simulated**: these figures come from a discrete-event simulation of the lab in virtual time (runtime sim), not from a measurement.',
          '',
        ]
      : []),
    ...(m.reanalysis
      ? [
          `> **Re-analysed** from the record of ${m.reanalysis.of} with ${m.reanalysis.overrides.map((o) => `\`${o}\``).join(', ')}: the same measurements, judged by the changed criteria.`,
          '',
        ]
      : []),
    '| | |',
    '|---|---|',
    `| date | ${m.startedAt} |`,
    `| machine | ${m.machine.cpuModel}, ${m.machine.cpus} cores, ${(m.machine.memoryBytes / 2 ** 30).toFixed(1)} GiB |`,
    `| OS | ${m.machine.os} |`,
    `| Node | ${m.machine.node} |`,
    `| runtime | ${simulated ? 'sim (simulated)' : m.runtime} |`,
    `| lab topology | ${topologyLine(m.topology)} |`,
    `| seed | ${e.seed}${many ? ` (runs: ${runs.map((r) => r.seed).join(', ')})` : ''} |`,
    `| scale | ${m.scale} |`,
    `| repetitions | ${runs.length} |`,
    `| git revision | ${m.gitRevision ?? 'unknown'} |`,
  ]);

  const warnings = x.runs.flatMap((r) =>
    runWarnings(r.summary).map((w) => (many ? `run ${r.index}: ${w}` : w)),
  );
  const unusable = x.runs.filter((r) => !r.summary.usable);
  if (warnings.length > 0 || unusable.length > 0)
    section('warnings', 'Warnings', [
      ...(unusable.length
        ? [
            `> **${unusable.length === runs.length && !many ? 'This run is unusable' : `Unusable: run ${unusable.map((r) => r.index).join(', ')}`}**: invalid, interrupted or offered ≠ recorded; it gives no verdict and its figures are not results.`,
            '',
          ]
        : []),
      ...warnings.map((w) => `> ⚠ ${w}  `),
    ]);

  const s = e.schedule;
  const f = m.scale;
  const w = s.warmup * f;
  const b = s.baseline * f;
  const d = triggerWindowMs(s.triggers) * f;
  const o = s.observe * f;
  section('what-ran', 'What ran', [
    e.lab
      ? `- **Lab**: api with ${describeWorkers(e)}, ${e.lab.api.queue.toUpperCase()} queue, work ${describeDuration(workOf(e.lab))}; nominal capacity ${first.capacity.nominalPerS} req/s${first.capacity.source === 'measured' ? `; \`% capacity\` used the measured ${first.capacity.usedPerS} req/s (${first.capacity.from})` : ''}.`
      : `- **System**: ${describeSystem(e.system!)}; capacity ${first.capacity.usedPerS === null ? 'unknown (not calibrated on this machine; every rate is absolute)' : `${first.capacity.usedPerS} req/s (${first.capacity.from})`}.`,
    `- **Load**: ${describeLoad(e.load)}; ${first.offeredPerS} req/s expected on average.`,
    `- **Client**: ${describeClient(e.client)}.`,
    `- **Phases**: warm-up 0–${sec(w)} s, baseline ${sec(w)}–${sec(w + b)} s, trigger ${sec(w + b)}–${sec(w + b + d)} s, observe until ${sec(w + b + d + o)} s.`,
    `- **Trigger${s.triggers.length > 1 ? 's' : ''}**: ${describeTriggers(s.triggers, f)}${notReached(x.runs)}.`,
    `- **Recovery criterion**: the first second t after the trigger's end from which mean goodput over the leading ${sec(e.recovery.window * f)} s window [t, t + ${sec(e.recovery.window * f)} s) is at or above ${(1 - e.recovery.tolerance) * 100}% of baseline goodput, and so is every such window starting within the next ${sec(e.recovery.hold * f)} s (0 when goodput never fell below it); recovered in time within ${e.recovery.within} × the trigger's duration (${sec(e.recovery.within * d)} s).`,
  ]);

  section('baseline', 'Steady state (baseline)', [
    windowTable(x.runs.map((r) => [r.index, r.summary.baseline])),
  ]);

  section('after-trigger', 'After the trigger', afterTriggerLines(x.runs));
  const criterion = sensitivityLines(x.runs);
  if (criterion) section('sensitivity', 'Sensitivity to the recovery criterion', criterion);

  const classes = classLines(x.runs);
  if (classes) section('classes', 'Request classes', classes);
  if (x.twin) section('twin', 'Model vs bench', twinLines(x, x.twin));

  const policies = policyLines(x.runs);
  if (policies) section('policies', 'Client policies', policies);

  const failures = runs.map((r) => Object.entries(r.outcomes).filter(([k, v]) => k !== 'ok' && v > 0));
  section('quality', 'Measurement quality', [
    ...validityLines(x.runs),
    ...latenessLines(x.runs),
    '| run | offered | recorded | attempts | late sends | schedule lag p99 | omission factor | usable |',
    '|---|---|---|---|---|---|---|---|',
    ...x.runs.map(
      ({ index, summary: r }) =>
        `| ${index} | ${r.offered} | ${r.recorded} | ${r.attempts} | ${r.lateSends} (${r.offered > 0 ? pct(r.lateSends / r.offered) : '–'}) | ${lat(r.scheduleLagMs, 'p99')} | ${r.omissionFactor ?? 'unmeasured'} | ${r.usable ? 'yes' : '**no**'} |`,
    ),
    '',
    ...(failures.some((fl) => fl.length > 0)
      ? [
          'Failed origin requests by kind (whole run):',
          '',
          ...x.runs.map((r, i) => {
            const fl = failures[i]!;
            return `- run ${r.index}: ${fl.length ? fl.map(([k, v]) => `${k} ${v}`).join(', ') : 'none'}`;
          }),
        ]
      : ['No origin request failed.']),
  ]);

  const machine = machineLines(x.runs);
  if (machine) section('machine', 'Machine', machine);
  if (x.sweep) section('sweep', 'Sweep', sweepLines(x.sweep), figs.sweep);
  if (x.steps) section('steps', 'Step test', stepLines(x.steps), figs.steps);
  if (figs.runs.length > 0)
    section(
      'figures',
      'Figures',
      [
        'Time runs from the start of the run (warm-up included) to the end of the observation; the phases are shaded. Each figure is also in `figures/` as SVG (for print), CSV (its data) and Vega-Lite JSON (to restyle); its title is in its caption, not drawn in it.',
      ],
      figs.runs,
    );

  const verdicts: string[] = [];
  if (runs.some((r) => r.hypothesis.length > 0)) {
    // A class column only when a threshold is per request class (load.mix).
    const classes = runs.some((r) => r.hypothesis.some((h) => h.class !== undefined));
    if (runs.some((r) => r.hypothesis.some((h) => h.default)))
      verdicts.push(
        `No steady-state hypothesis was declared: the default one was judged instead (${DEFAULT_STEADY_STATE}; docs/hypotheses.md), its rows marked "default".`,
        '',
      );
    verdicts.push(
      `| run | metric |${classes ? ' class |' : ''} window | threshold | value | samples | verdict |`,
      `|---|---|${classes ? '---|' : ''}---|---|---|---|---|`,
    );
    const notes = new Set<string>();
    for (const { index, summary: r } of x.runs)
      for (const h of r.hypothesis) {
        if (h.note) notes.add(`run ${index}: ${h.note}`);
        verdicts.push(
          `| ${index} | ${h.metric} |${classes ? ` ${h.class ?? 'all'} |` : ''} ${windowName(h.window)}${h.span ? ` (${h.span.startS}–${h.span.endS} s)` : ''} | \`${h.threshold}\` | ${hypothesisValue(h.metric, h.value)} | ${h.samples} | **${h.verdict}** |`,
        );
      }
    verdicts.push('');
    if (notes.size > 0) verdicts.push(...[...notes].map((n) => `- ${n}: unmeasured after recovery.`), '');
  } else verdicts.push('No steady-state hypothesis was declared.', '');
  for (const { index, summary: r } of x.runs)
    verdicts.push(
      isValid(r)
        ? `- run ${index}: **${r.outcome}**: ${r.outcomeReason}.`
        : `- run ${index}: **invalid**: no recovered/metastable verdict (see Measurement quality for the checks it failed).`,
    );
  if (x.aggregate) {
    // The figures are spread into the aggregate by name (aggregateRuns): read them as a record.
    const fig: Record<string, unknown> = x.aggregate;
    const t = tallyOutcomes(runs);
    verdicts.push(
      '',
      `Across ${runs.length} runs: ${describeTally(t)}` +
        (t.valid > 0
          ? `; over the ${t.valid} valid run${t.valid === 1 ? '' : 's'}, recovery time ${dist(fig['recoveryTimeS'] as Distribution | undefined, 's')}; goodput after the trigger ${dist(
              (fig['afterTrigger'] as Record<string, Distribution> | undefined)?.['goodputPerS'],
              'req/s',
            )}; client-side amplification after the trigger ${dist(
              (fig['afterTrigger'] as Record<string, Distribution> | undefined)?.['amplification'],
              '',
            )}`
          : '') +
        '.',
    );
  }
  verdicts.push(...classVerdictLines(x.runs));
  section('verdicts', 'Verdicts', verdicts);
  return sections;
}

/** The report's title: a sweep's by the sweep's name, anything else by its experiment's. */
export function reportTitle(x: ResultsData): string {
  if (!x.sweep) return x.experiment.name;
  return x.sweep.name !== undefined ? `Sweep ${x.sweep.name}` : `Sweep of ${x.experiment.name}`;
}

/** report.md: the sections, with each figure as an SVG image and its caption. */
export function renderMarkdown(x: ResultsData, figs: ReportFigures = NO_FIGURES): string {
  const out: string[] = [];
  reportSections(x, figs).forEach((s, i) => {
    out.push(`${i === 0 ? '#' : '##'} ${s.title}`, '', s.body, '');
    for (const f of s.figures)
      out.push(`![${f.title}](figures/${f.id}.svg)`, '', `*${f.title}.* ${f.caption}`, '');
  });
  return out.join('\n');
}

/** The client policies' counters (whole run), only for the policies the client used; null when none shows. */
function policyLines(runs: ResultsData['runs']): string[] | null {
  const rows: [string, (p: RunSummary['policies']) => number | null][] = [
    ['retries sent', (p) => p.retries],
    ['retries denied by the budget', (p) => p.retriesDeniedByBudget],
    ['breaker opens', (p) => p.breakerOpens],
    ['attempts refused by the breaker', (p) => p.breakerRejected],
    ['breaker open (client-seconds)', (p) => p.breakerOpenS],
    ['attempts refused by throttling', (p) => p.throttled],
    ['hedges sent', (p) => p.hedgesSent],
    ['hedges won', (p) => p.hedgesWon],
    ['hedges denied by the budget', (p) => p.hedgesDenied],
    ['cancelled attempts', (p) => p.cancelledAttempts],
    ['abandoned origins', (p) => p.abandoned],
  ];
  const present = runs.filter((r) => r.summary.policies);
  if (present.length === 0) return null;
  const shown = rows.filter(([, f]) =>
    present.some((r) => f(r.summary.policies) !== null && f(r.summary.policies) !== 0),
  );
  if (shown.length === 0) return null;
  const clients = present[0]!.summary.policies.clients;
  return [
    `Counts over the whole run${clients > 1 ? `, summed over ${clients} clients` : ''}.`,
    '',
    `| counter | ${present.map((r) => `run ${r.index}`).join(' | ')} |`,
    `|---|${present.map(() => '---').join('|')}|`,
    ...shown.map(
      ([name, f]) => `| ${name} | ${present.map((r) => f(r.summary.policies) ?? '–').join(' | ')} |`,
    ),
  ];
}

/**
 * A sweep's report opens with the sweep's own result (sweepLead.ts), then says which point
 * the sections before **Sweep** describe.
 */
function sweepHead(x: ResultsData): string[] {
  const point = (x.runs[0]!.manifest as { sweep?: { point?: number } }).sweep?.point;
  return [
    `A sweep of the experiment **${x.experiment.name}**.`,
    '',
    ...sweepLead(x.sweep!),
    `The section **Sweep** covers every point; the sections before it describe the sweep's first point${point !== undefined ? ` (point-${point}/, whose own report.md leads with its outcome)` : ''}.`,
    '',
  ];
}

/** " (not reached: the run ended before it)" when no run reached its trigger; which runs did not, otherwise. */
function notReached(runs: ResultsData['runs']): string {
  const not = runs.filter((r) => !triggerReached(r.summary));
  if (not.length === 0) return '';
  if (not.length === runs.length) return ' (not reached: the run ended before it)';
  return ` (not reached in run ${not.map((r) => r.index).join(', ')}: it ended before it)`;
}

/**
 * After the trigger: the window's figures and each run's outcome, for the runs that
 * reached their trigger only; a run that ended before it says so and claims nothing more.
 * A restart's time to healthy is reported on its own; a failed undo is named.
 */
function afterTriggerLines(runs: ResultsData['runs']): string[] {
  const reached = runs.filter((r) => triggerReached(r.summary));
  const out: string[] = [];
  if (reached.length > 0)
    out.push(
      windowTable(reached.map((r) => [r.index, r.summary.afterTrigger])),
      '',
      '| run | trigger (s) | outcome | recovery time | deadline | observed after |',
      '|---|---|---|---|---|---|',
      ...reached.map(
        ({ index, summary: r }) =>
          `| ${index} | ${r.trigger.startS}–${r.trigger.endS} | ${isValid(r) ? r.outcome : '**invalid** (no verdict)'} | ${recoveryCell(r)} | ${r.recoveryDeadlineS} s | ${r.observedAfterS} s |`,
      ),
    );
  const notes: string[] = [];
  for (const { index, summary: r } of runs) {
    const who = runs.length > 1 ? `run ${index}: ` : '';
    const line = notReachedLine(r);
    if (line) {
      notes.push(`- ${who}${line}`);
      continue;
    }
    for (const t of r.triggers ?? []) {
      if (t.restartHealthyS !== undefined)
        notes.push(
          `- ${who}${t.kind} ${t.target}: the restart took ${t.restartHealthyS} s to become healthy (reported on its own: the trigger ended when the process was started again, and the recovery time counts from there).`,
        );
      if (t.error) notes.push(`- ${who}${t.kind} ${t.target} failed to apply: ${t.error}`);
      if (t.undoError) notes.push(`- ${who}${t.kind} ${t.target}: undoing it failed: ${t.undoError}`);
    }
  }
  if (notes.length > 0) out.push(...(out.length > 0 ? [''] : []), ...notes);
  return out;
}

function workOf(lab: LabSection) {
  const wk = lab.api.work;
  return wk.dist === 'lognormal'
    ? { dist: wk.dist, meanMs: wk.mean, sigma: wk.sigma ?? 1 }
    : { dist: wk.dist, meanMs: wk.mean };
}

function windowTable(ws: readonly (readonly [number, WindowSummary])[]): string {
  const rows = [
    '| run | seconds | offered | goodput | amplification (client) | amplification (server) | p50 | p90 | p99 | max |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const [i, w] of ws) {
    const l = w.latencyMs as LatencySummary;
    rows.push(
      `| ${i} | ${w.seconds} | ${withUnit(w.offeredPerS, '/s')} | ${withUnit(w.goodputPerS, '/s')} | ${withUnit(w.amplification, '×')} | ${withUnit(w.amplificationServer, '×')} | ${lat(l, 'p50')} | ${lat(l, 'p90')} | ${lat(l, 'p99')} | ${lat(l, 'max')} |`,
    );
  }
  return rows.join('\n');
}

function sweepLines(t: SweepTable): string[] {
  // A factor's unit as its levels read (load.rate in % capacity), else as the table says.
  const f = t.factors.map((x) => {
    const n = numericLevels(t.rows.map((r) => r.factors[x.name]));
    return n?.unit ? `${x.name} (${n.unit})` : `${x.name} (${x.unit})`;
  });
  const g = t.figures.map((x) => `${x.name} (${x.unit})`);
  // By the factors' levels, numerically where they read as numbers; not in run order.
  const byLevels = compareByLevels(
    t.factors.map((x) => x.name),
    t.rows.map((r) => r.factors),
  );
  const rows = [...t.rows].sort((p, q) => byLevels(p.factors, q.factors));
  const ci = t.rows.some((r) => r.perRun && Object.values(r.perRun).some((v) => v.length > 1));
  return [
    `${t.design === 'grid' ? 'Full factorial' : 'One factor at a time around the reference point'}: ${t.factors
      .map((x) => `${x.name}${x.reference !== undefined ? ` (reference ${x.reference})` : ''}`)
      .join(
        ', ',
      )}; ${t.rows.length} points. Figures and verdicts cover each point's valid runs only; invalid runs are counted apart, with the validity checks they failed.${ci ? ' Each figure is the mean over the valid runs, with its 95% confidence interval (t distribution) where there are several.' : ''}`,
    '',
    `| ${[...f, ...g, 'verdict'].join(' | ')} |`,
    `|${[...f, ...g, 'verdict'].map(() => '---').join('|')}|`,
    ...rows.map(
      (r) =>
        `| ${[
          ...t.factors.map((x) => String(r.factors[x.name] ?? '–')),
          ...t.figures.map((x) => {
            const st = pointStat(r, x.name);
            return (
              withUnit(st.value, ` ${x.unit}`) +
              (st.low !== null && st.high !== null ? ` [${sig3(st.low)}, ${sig3(st.high)}]` : '')
            );
          }),
          `**${r.verdict}**${r.outcomes !== undefined ? ` (${r.outcomes})` : r.runs !== undefined && r.metastableRuns !== undefined ? ` (metastable ${r.metastableRuns}/${r.runs})` : ''}`,
        ].join(' | ')} |`,
    ),
    ...effectsLines(t),
  ];
}

/**
 * A two-factor grid's effects table (orchestrator/analysis/effects.ts): per figure of
 * merit, the main effects and the interaction with standard error and 95% CI, from a
 * linear model with an interaction term over every valid run.
 */
function effectsLines(t: SweepTable): string[] {
  if (t.design !== 'grid' || t.factors.length !== 2) return [];
  const [a, b] = [t.factors[0]!.name, t.factors[1]!.name];
  const fits = t.figures.map((m) => ({
    m,
    r: twoFactorEffects(
      [a, b],
      t.rows.flatMap((row) =>
        (row.perRun?.[m.name] ?? [])
          .filter((y): y is number => y !== null)
          .map((y) => ({ a: row.factors[a]!, b: row.factors[b]!, y })),
      ),
    ),
  }));
  const ok = fits.flatMap((x) => (x.r.ok ? [{ m: x.m, fit: x.r.fit }] : []));
  const out = ['', '### Factorial effects', ''];
  if (ok.length > 0) {
    const c = ok[0]!.fit.coding;
    out.push(
      `A linear model with an interaction term, fitted by least squares over every valid run: y = β0 + βA·xA + βB·xB + βAB·xA·xB, with ${c.map((x) => `${x.factor} coded −1 at ${x.low} and +1 at ${x.high}`).join(', ')} (levels in between in proportion). An effect is 2β: the change of the figure from a factor's low level to its high one, averaged over the other factor; the interaction is half the difference between ${a}'s effect at the high and at the low level of ${b}. Standard errors and 95% confidence intervals from the t distribution with n − 4 degrees of freedom.`,
      '',
      '| figure of merit | effect | estimate | standard error | 95% CI | runs |',
      '|---|---|---|---|---|---|',
      ...ok.flatMap(({ m, fit }) =>
        fit.effects.map(
          (e) =>
            `| ${m.name} (${m.unit}) | ${e.term} | ${signed(e.estimate)} | ${sig3(e.se)} | [${sig3(e.ci95[0])}, ${sig3(e.ci95[1])}] | ${fit.n} |`,
        ),
      ),
    );
  }
  const not = fits.filter((x) => !x.r.ok);
  if (not.length > 0)
    out.push('', ...not.map((x) => `- ${x.m.name}: no effects estimated: ${x.r.ok ? '' : x.r.reason}.`));
  return out;
}

function signed(x: number): string {
  return x > 0 ? `+${sig3(x)}` : sig3(x);
}

function stepLines(t: StepTable): string[] {
  const l = (v: number | null, n: number) =>
    v === null || n === 0 ? 'unmeasured (n=0)' : `${sig3(v)} ms (n=${n})`;
  return [
    t.saturation
      ? `Saturation at ${t.saturation.offeredPerS} req/s offered (goodput ${t.saturation.goodputPerS ?? 'unmeasured'} req/s).`
      : 'No saturation point was found within the steps.',
    '',
    '| offered | goodput | p50 | p99 |',
    '|---|---|---|---|',
    ...t.steps.map(
      (s) =>
        `| ${withUnit(s.offeredPerS, '/s')} | ${withUnit(s.goodputPerS, '/s')} | ${l(s.latencyMs.p50, s.latencyMs.samples)} | ${l(s.latencyMs.p99, s.latencyMs.samples)} |`,
    ),
  ];
}

/** A hypothesis window as a reader says it. */
function windowName(w: string): string {
  return w === 'afterRecovery' ? 'after recovery' : w;
}

/** A percentile with its sample count, or "unmeasured" when the window had no sample. */
export function lat(l: LatencySummary, key: 'p50' | 'p90' | 'p99' | 'max'): string {
  const v = l[key];
  return l.samples === 0 || v === null ? 'unmeasured (n=0)' : `${sig3(v)} ms (n=${l.samples})`;
}

function dist(d: Distribution | undefined, unit: string): string {
  const u = unit ? ` ${unit}` : '';
  if (!d || d.count === 0 || d.mean === null) return 'unmeasured';
  if (d.ci95) return `${sig3(d.mean)}${u} (95% CI ${sig3(d.ci95[0])}–${sig3(d.ci95[1])}${u}, n=${d.count})`;
  return `${sig3(d.mean)}${u} (n=${d.count})`;
}

export function topologyLine(t: unknown): string {
  const comps =
    (t as { components?: { name: string; config?: Record<string, unknown> }[] })?.components ?? [];
  return (
    comps
      .map(
        (c) =>
          `${c.name}${
            c.config
              ? ` (${Object.entries(c.config)
                  .filter(([k]) => k !== 'seed')
                  .map(([k, v]) => `${k} ${typeof v === 'object' ? JSON.stringify(v) : String(v)}`)
                  .join(', ')})`
              : ''
          }`,
      )
      .join(' → ') || 'unknown'
  );
}

function pct(x: number): string {
  return `${Math.round(x * 10000) / 100}%`;
}

function sec(ms: number): string {
  return String(Math.round(ms) / 1000);
}

/**
 * The run beside its simulated twin (twin/: the same file, seed and scale in virtual
 * time): the outcome, recovery time, amplification and goodput after the trigger, each
 * with the difference. Several runs: outcome counts (valid runs; the invalid counted
 * apart, with why) and means over the valid runs.
 */
/** The capacity a run's `% capacity` used, and its source (older summaries: the nominal one). */
function capacityCell(xs: readonly RunSummary[]): string {
  const c = xs[0]?.capacity;
  if (!c) return '–';
  const perS = c.usedPerS ?? c.nominalPerS;
  return perS === null ? 'unknown' : `${+perS.toFixed(3)}/s ${c.source ?? 'nominal'}`;
}

/**
 * The Markov model's prediction beside the measured and simulated recovery times: its mean
 * recovery time from a full server and its probability of recovering within the run's
 * recovery deadline (orchestrator/analysis/markov/, `metabench model --ctmc`).
 */
function ctmcRow(e: ResultsData['experiment'], s: RunSummary): string {
  const c = ctmcBeside(e, s.offeredPerS, s.recoveryDeadlineS);
  const mean = c.recoveryS === null ? `> ${c.resolvableS.toExponential(1)} s` : `${round(c.recoveryS, 3)} s`;
  const p =
    c.pRecoveredWithin === null ? 'not computed (too long a horizon)' : String(round(c.pRecoveredWithin, 3));
  return `| recovery time, Markov model (CTMC) | mean ${mean} from a full server; P(recovered within ${c.withinS} s) ${p} | | ${c.states} states${c.granularity > 1 ? `, batches of ${c.granularity} jobs` : ''} |`;
}

function twinLines(bench: ResultsData, sim: ResultsData): string[] {
  const a = bench.runs.map((r) => r.summary);
  const b = sim.runs.map((r) => r.summary);
  const mean = (xs: readonly RunSummary[], f: (s: RunSummary) => number | null): number | null => {
    const v = xs.map(f).filter((n): n is number => typeof n === 'number' && Number.isFinite(n));
    return v.length ? round(v.reduce((p, q) => p + q, 0) / v.length, 3) : null;
  };
  // Outcomes (DESIGN.md §2); several runs: counted over the valid ones, the invalid apart.
  const verdict = (xs: readonly RunSummary[]): string =>
    xs.length === 1 ? (isValid(xs[0]!) ? xs[0]!.outcome : 'invalid') : describeTally(tallyOutcomes(xs));
  // Several runs: means over the valid ones (an invalid run's figures are not results).
  const valid = (xs: readonly RunSummary[]): readonly RunSummary[] =>
    xs.length > 1 ? xs.filter(isValid) : xs;
  const row = (what: string, f: (s: RunSummary) => number | null, unit = ''): string => {
    const x = mean(valid(a), f);
    const y = mean(valid(b), f);
    const d =
      x === null || y === null
        ? '–'
        : `${round(y - x, 3)}${unit}${x !== 0 ? ` (${y - x >= 0 ? '+' : ''}${Math.round(((y - x) / Math.abs(x)) * 1000) / 10}%)` : ''}`;
    return `| ${what} | ${x ?? '–'}${x !== null ? unit : ''} | ${y ?? '–'}${y !== null ? unit : ''} | ${d} |`;
  };
  const va = verdict(a);
  const vb = verdict(b);
  const recovery = (xs: readonly RunSummary[]): string => {
    if (xs.length === 1) return recoveryCell(xs[0]!);
    const valid = xs.filter(isValid);
    const m = mean(valid, (s) => s.recoveryTimeS);
    return `${valid.filter((s) => s.recovered).length}/${valid.length} valid runs recovered${m !== null ? `, mean ${m} s` : ''}`;
  };
  const ra = mean(a.filter(isValid), (s) => s.recoveryTimeS);
  const rb = mean(b.filter(isValid), (s) => s.recoveryTimeS);
  const runtime = bench.runs[0]!.manifest.runtime;
  return [
    `The same experiment file, seed${a.length > 1 ? 's' : ''} and scale, simulated in virtual time (\`${TWIN_DIR}/\`, its own report in \`${TWIN_DIR}/report.md\`). A difference is the model's error, or something the simulation leaves out (its assumptions are in \`${TWIN_DIR}/run-1/manifest.json\`, \`simulation\`).`,
    '',
    `| | bench (${runtime}) | simulation | difference (simulation − bench) |`,
    '|---|---|---|---|',
    `| outcome | **${va}** | **${vb}** | ${va === vb ? 'the same' : '**they differ**'} |`,
    // The rate each side offered, and the capacity its `% capacity` resolved against.
    row('offered rate, planned (req/s)', (s) => s.offeredPerS),
    `| capacity for % capacity | ${capacityCell(a)} | ${capacityCell(b)} | ${capacityCell(a) === capacityCell(b) ? 'the same' : '**they differ**'} |`,
    `| recovery time | ${recovery(a)} | ${recovery(b)} | ${ra !== null && rb !== null ? `${round(rb - ra, 3)} s` : '–'} |`,
    ctmcRow(bench.experiment, a[0]!),
    row('goodput in the baseline (req/s)', (s) => s.baseline.goodputPerS),
    row('goodput after the trigger (req/s)', (s) => s.afterTrigger.goodputPerS),
    row('amplification after the trigger (client)', (s) => s.afterTrigger.amplification),
    row('amplification after the trigger (server)', (s) => s.afterTrigger.amplificationServer),
    row('p99 after the trigger (ms)', (s) => s.afterTrigger.latencyMs.p99),
    row('attempts (whole run)', (s) => s.attempts),
  ];
}
