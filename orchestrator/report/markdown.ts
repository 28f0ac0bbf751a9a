import type { LatencySummary } from '../../bench/record/histogram.js';
import { describeDuration } from '../../bench/distributions.js';
import type { AggregateSummary, Distribution } from '../analysis/aggregate.js';
import type { RunSummary, WindowSummary } from '../analysis/summary.js';
import type { Experiment } from '../spec/schema.js';
import { describeClient } from '../run/client.js';

/** What the report is made from: the files of a results folder, nothing else. */
export interface ReportInput {
  readonly experiment: Experiment;
  readonly manifest: {
    readonly startedAt: string;
    readonly gitRevision: string | null;
    readonly machine: { cpuModel: string; cpus: number; memoryBytes: number; os: string; node: string };
    readonly runtime: string;
    readonly topology: unknown;
    readonly scale: number;
  };
  readonly runs: readonly RunSummary[];
  readonly aggregate: AggregateSummary | null;
}

/**
 * report.md: what ran, the steady state, what happened after the trigger, and the
 * verdicts last. Every percentile carries its sample count; a window without samples
 * says "unmeasured".
 */
export function renderMarkdown(x: ReportInput): string {
  const e = x.experiment;
  const m = x.manifest;
  const first = x.runs[0];
  const out: string[] = [];
  out.push(`# ${e.name}`, '');
  if (e.description) out.push(e.description, '');
  out.push(
    '| | |',
    '|---|---|',
    `| date | ${m.startedAt} |`,
    `| machine | ${m.machine.cpuModel}, ${m.machine.cpus} cores, ${(m.machine.memoryBytes / 2 ** 30).toFixed(1)} GiB |`,
    `| OS | ${m.machine.os} |`,
    `| Node | ${m.machine.node} |`,
    `| runtime | ${m.runtime} |`,
    `| topology | ${topologyLine(m.topology)} |`,
    `| seed | ${e.seed}${x.runs.length > 1 ? ` (runs: ${x.runs.map((r) => r.seed).join(', ')})` : ''} |`,
    `| scale | ${m.scale} |`,
    `| repetitions | ${x.runs.length} |`,
    `| git revision | ${m.gitRevision ?? 'unknown'} |`,
    '',
  );

  const s = e.schedule;
  const f = m.scale;
  const w = s.warmup * f;
  const b = s.baseline * f;
  const d = s.trigger.duration * f;
  const o = s.observe * f;
  out.push(
    '## What ran',
    '',
    `- **Lab**: api with ${e.lab.api.workers} workers, ${e.lab.api.queue.toUpperCase()} queue, work ${describeDuration(workOf(e))}; nominal capacity ${first?.capacity.nominalPerS ?? '?'} req/s.`,
    `- **Load**: open loop, ${e.load.arrival} arrivals at ${first?.offeredPerS ?? '?'} req/s (${'perS' in e.load.rate ? `${e.load.rate.perS}/s` : `${e.load.rate.capacityFraction * 100}% of nominal capacity`}).`,
    `- **Client**: ${describeClient(e.client)}.`,
    `- **Schedule**: warm-up 0–${sec(w)} s, baseline ${sec(w)}–${sec(w + b)} s, trigger ${sec(w + b)}–${sec(w + b + d)} s, observe until ${sec(w + b + d + o)} s.`,
    `- **Trigger**: ${s.trigger.kind} ${s.trigger.target} for ${sec(d)} s.`,
    `- **Recovery criterion**: goodput over a trailing ${sec(e.recovery.window * f)} s window at or above ${(1 - e.recovery.tolerance) * 100}% of baseline goodput, held for ${sec(e.recovery.hold * f)} s, within ${e.recovery.within} × the trigger's duration (${sec(e.recovery.within * d)} s).`,
    '',
  );

  out.push('## Steady state (baseline)', '');
  out.push(windowTable(x.runs.map((r) => r.baseline)), '');
  out.push('## After the trigger', '');
  out.push(windowTable(x.runs.map((r) => r.afterTrigger)), '');
  out.push(
    '| run | trigger (s) | recovered | recovery time | deadline | observed after |',
    '|---|---|---|---|---|---|',
    ...x.runs.map(
      (r) =>
        `| ${r.run} | ${r.trigger.startS}–${r.trigger.endS} | ${r.recovered ? 'yes' : 'no'} | ${r.recoveryTimeS !== null ? `${r.recoveryTimeS} s` : 'not recovered'} | ${r.recoveryDeadlineS} s | ${r.observedAfterS} s |`,
    ),
    '',
  );

  out.push(...policySection(x.runs));

  out.push('## Measurement quality', '');
  out.push(
    '| run | offered | recorded | attempts | late sends | schedule lag p99 | omission factor | usable |',
    '|---|---|---|---|---|---|---|---|',
    ...x.runs.map(
      (r) =>
        `| ${r.run} | ${r.offered} | ${r.recorded} | ${r.attempts} | ${r.lateSends} | ${lat(r.scheduleLagMs, 'p99')} | ${r.omissionFactor ?? 'unmeasured'} | ${r.usable ? 'yes' : '**no**'} |`,
    ),
    '',
  );
  const warnings = x.runs.flatMap((r) =>
    r.warnings.map((wn) => (x.runs.length > 1 ? `run ${r.run}: ${wn}` : wn)),
  );
  if (warnings.length) out.push('**Warnings**', '', ...warnings.map((wn) => `- ${wn}`), '');
  const failures = x.runs.map((r) => Object.entries(r.outcomes).filter(([k, v]) => k !== 'ok' && v > 0));
  if (failures.some((fl) => fl.length > 0)) {
    out.push('Failed origin requests by kind (whole run):', '');
    x.runs.forEach((r, i) => {
      const fl = failures[i]!;
      out.push(`- run ${r.run}: ${fl.length ? fl.map(([k, v]) => `${k} ${v}`).join(', ') : 'none'}`);
    });
    out.push('');
  }

  out.push('## Verdicts', '');
  if (x.runs.some((r) => r.hypothesis.length > 0)) {
    out.push(
      '| run | metric | window | threshold | value | samples | verdict |',
      '|---|---|---|---|---|---|---|',
    );
    for (const r of x.runs)
      for (const h of r.hypothesis)
        out.push(
          `| ${r.run} | ${h.metric} | ${h.window} | \`${h.threshold}\` | ${h.value ?? '–'} | ${h.samples} | **${h.verdict}** |`,
        );
    out.push('');
  } else {
    out.push('No steady-state hypothesis was declared.', '');
  }
  for (const r of x.runs) {
    const verdict = r.metastable === null ? 'unmeasured' : r.metastable ? 'metastable' : 'not metastable';
    out.push(`- run ${r.run}: **${verdict}**: ${r.recoveryReason}.`);
  }
  if (x.aggregate) {
    const a = x.aggregate;
    const fig = a as unknown as Record<string, unknown>;
    out.push(
      '',
      `Across ${a.runs} runs: metastable ${a.metastable.true}/${a.metastable.of}` +
        (a.metastable.unmeasured ? ` (${a.metastable.unmeasured} unmeasured)` : '') +
        `; recovery time ${dist(fig['recoveryTimeS'] as Distribution | undefined, 's')}; goodput after the trigger ${dist(
          (fig['afterTrigger'] as Record<string, Distribution> | undefined)?.['goodputPerS'],
          'req/s',
        )}.`,
    );
  }
  out.push('');
  return out.join('\n');
}

/** The client policies' counters (whole run), only for the policies the client used. */
function policySection(runs: readonly RunSummary[]): string[] {
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
  const present = runs.filter((r) => r.policies);
  if (present.length === 0) return [];
  const shown = rows.filter(([, f]) => present.some((r) => f(r.policies) !== null && f(r.policies) !== 0));
  if (shown.length === 0) return [];
  const clients = present[0]!.policies.clients;
  return [
    '## Client policies',
    '',
    `Counts over the whole run${clients > 1 ? `, summed over ${clients} clients` : ''}.`,
    '',
    `| counter | ${present.map((r) => `run ${r.run}`).join(' | ')} |`,
    `|---|${present.map(() => '---').join('|')}|`,
    ...shown.map(([name, f]) => `| ${name} | ${present.map((r) => f(r.policies) ?? '–').join(' | ')} |`),
    '',
  ];
}

function workOf(e: Experiment) {
  const wk = e.lab.api.work;
  return wk.dist === 'lognormal'
    ? { dist: wk.dist, meanMs: wk.mean, sigma: wk.sigma ?? 1 }
    : { dist: wk.dist, meanMs: wk.mean };
}

function windowTable(ws: readonly WindowSummary[]): string {
  const rows = [
    '| run | seconds | offered/s | goodput/s | amplification (client) | amplification (server) | p50 | p90 | p99 | max |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ];
  ws.forEach((w, i) => {
    const l = w.latencyMs as LatencySummary;
    rows.push(
      `| ${i + 1} | ${w.seconds} | ${w.offeredPerS ?? 'unmeasured'} | ${w.goodputPerS ?? 'unmeasured'} | ${w.amplification ?? 'unmeasured'} | ${w.amplificationServer ?? 'unmeasured'} | ${lat(l, 'p50')} | ${lat(l, 'p90')} | ${lat(l, 'p99')} | ${lat(l, 'max')} |`,
    );
  });
  return rows.join('\n');
}

/** A percentile with its sample count, or "unmeasured" when the window had no sample. */
export function lat(l: LatencySummary, key: 'p50' | 'p90' | 'p99' | 'max'): string {
  const v = l[key];
  return l.samples === 0 || v === null ? 'unmeasured (n=0)' : `${v} ms (n=${l.samples})`;
}

function dist(d: Distribution | undefined, unit: string): string {
  if (!d || d.count === 0 || d.mean === null) return 'unmeasured';
  if (d.ci95) return `${d.mean} ${unit} (95% CI ${d.ci95[0]}–${d.ci95[1]}, n=${d.count})`;
  return `${d.mean} ${unit} (n=${d.count})`;
}

function topologyLine(t: unknown): string {
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
                  .map(([k, v]) => `${k} ${v}`)
                  .join(', ')})`
              : ''
          }`,
      )
      .join(' → ') || 'unknown'
  );
}

function sec(ms: number): string {
  return String(Math.round(ms) / 1000);
}
