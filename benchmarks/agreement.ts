/**
 * Lab and simulation agree, per experiment (issue 17, point 10): `npm run agreement`.
 *
 * Runs every catalogue experiment (experiments/*.yaml, not the sweep files) once on the
 * local lab and once as its simulated twin (`--runtime sim`), at the reproduction suite's
 * scale (0.2, or the exceptions in orchestrator/model/agreement.ts), with the same seed and the nominal capacity on both sides, through the
 * same runExperiment as `metabench run`; then writes docs/agreement.md from every result
 * kept in results/agreement/ (rows.json and each run's folder).
 *
 *   node dist/benchmarks/agreement.js                 every experiment (~30 min of lab time)
 *   node dist/benchmarks/agreement.js NAME...         only these (e.g. rerun the invalid ones);
 *                                                     the others' stored rows are kept
 *   node dist/benchmarks/agreement.js --render        only rewrite docs/agreement.md
 *
 * step-test.yaml enters like every other file: it declares a schedule with a 10 s pause,
 * and `metabench run` runs it so. Its own claim (the saturation point) is `metabench
 * calibrate`'s, which measures a real lab and refuses `--runtime sim`; the reproduction
 * suite checks it on the lab. Experiments the simulation cannot model (orchestrator/model/agreement.ts)
 * run on the lab only and are listed with the reason.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RunSummary } from '../orchestrator/analysis/summary.js';
import { describeMachine } from '../orchestrator/results/manifest.js';
import { runExperiment } from '../orchestrator/run/runExperiment.js';
import { loadExperimentFile } from '../orchestrator/spec/load.js';
import {
  outcomesAgree,
  simCannotModel,
  SUITE_MIN_SCALE,
  suiteScale,
} from '../orchestrator/model/agreement.js';
import { round } from '../foundation/round.js';
import { registerRuntimes } from '../orchestrator/cli/runtimes.js';

registerRuntimes();

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const STORE = join(REPO, 'results', 'agreement');
const ROWS = join(STORE, 'rows.json');
const DOC = join(REPO, 'docs', 'agreement.md');

type Side = 'lab' | 'sim';

/** One run of one side, as kept in rows.json. */
interface SideResult {
  readonly startedAt: string;
  readonly loadAvg1: number;
  readonly wallS: number;
  readonly summary: Pick<
    RunSummary,
    | 'outcome'
    | 'outcomeReason'
    | 'recoveryTimeS'
    | 'validity'
    | 'baseline'
    | 'afterTrigger'
    | 'offeredPerS'
    | 'lateSends'
    | 'sustainingEffect'
    | 'projectedRecoveryS'
  > | null;
  readonly error: string | null;
}

interface Row {
  readonly name: string;
  readonly file: string;
  readonly cannotModel: string | null;
  lab?: SideResult;
  sim?: SideResult;
  /** Earlier lab runs of this experiment, replaced by a rerun (kept: they are part of the record). */
  earlierLab?: SideResult[];
}

interface Store {
  machine: ReturnType<typeof describeMachine>;
  startedAt: string;
  loadAvgAtStart: number[];
  rows: Record<string, Row>;
}

function catalogue(): string[] {
  return readdirSync(join(REPO, 'experiments'))
    .filter((f) => f.endsWith('.yaml') && !f.endsWith('.sweep.yaml'))
    .sort()
    .map((f) => `experiments/${f}`);
}

async function runSide(file: string, name: string, side: Side): Promise<SideResult> {
  const out = join(STORE, name, side);
  rmSync(out, { recursive: true, force: true });
  const startedAt = new Date().toISOString();
  const loadAvg1 = round(loadavg()[0]!, 2);
  const t0 = performance.now();
  try {
    const e = { ...loadExperimentFile(join(REPO, file)), repeat: 1 };
    const r = await runExperiment(e, {
      scale: suiteScale(e, join(REPO, file)),
      out,
      quiet: true,
      stop: new AbortController().signal,
      sourceFile: join(REPO, file),
      runtime: side === 'lab' ? 'local' : 'sim',
      capacity: 'nominal',
      manifestExtra: { command: ['agreement'], experimentFile: file },
    });
    const s = r.runs[0]!;
    return {
      startedAt,
      loadAvg1,
      wallS: round((performance.now() - t0) / 1000, 1),
      summary: {
        outcome: s.outcome,
        outcomeReason: s.outcomeReason,
        recoveryTimeS: s.recoveryTimeS,
        validity: s.validity,
        baseline: s.baseline,
        afterTrigger: s.afterTrigger,
        offeredPerS: s.offeredPerS,
        lateSends: s.lateSends,
        sustainingEffect: s.sustainingEffect,
        projectedRecoveryS: s.projectedRecoveryS,
      },
      error: null,
    };
  } catch (err) {
    return {
      startedAt,
      loadAvg1,
      wallS: round((performance.now() - t0) / 1000, 1),
      summary: null,
      error: err instanceof Error ? err.message : String(err),
    };
  }
}

function loadStore(): Store {
  if (existsSync(ROWS)) return JSON.parse(readFileSync(ROWS, 'utf8')) as Store;
  return { machine: describeMachine(), startedAt: new Date().toISOString(), loadAvgAtStart: [], rows: {} };
}

function save(store: Store): void {
  mkdirSync(STORE, { recursive: true });
  writeFileSync(ROWS, `${JSON.stringify(store, null, 2)}\n`);
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const store = loadStore();
  if (!args.includes('--render')) {
    const only = args.filter((a) => !a.startsWith('--'));
    const files = catalogue().filter((f) => only.length === 0 || only.some((n) => f.endsWith(`/${n}.yaml`)));
    if (only.length === 0) {
      // A full run starts the record afresh, on this machine, now.
      store.machine = describeMachine();
      store.startedAt = new Date().toISOString();
      store.loadAvgAtStart = loadavg().map((x) => round(x, 2));
      store.rows = {};
    }
    // The simulations first (seconds each), then the lab runs one at a time.
    for (const side of ['sim', 'lab'] as const)
      for (const file of files) {
        const e = loadExperimentFile(join(REPO, file));
        const row: Row = store.rows[e.name] ?? { name: e.name, file, cannotModel: simCannotModel(e) };
        store.rows[e.name] = row;
        if (side === 'sim' && row.cannotModel !== null) continue;
        process.stderr.write(`agreement: ${e.name} (${side}) ...`);
        if (side === 'lab' && row.lab) row.earlierLab = [...(row.earlierLab ?? []), row.lab];
        row[side] = await runSide(file, e.name, side);
        const r = row[side];
        process.stderr.write(
          ` ${r.summary?.outcome ?? `error: ${r.error}`} (${r.wallS} s, load ${r.loadAvg1})\n`,
        );
        save(store);
      }
  }
  writeFileSync(DOC, render(store));
  process.stderr.write(`agreement: wrote ${DOC}\n`);
}

function render(store: Store): string {
  const m = store.machine;
  const rows = Object.values(store.rows).sort((a, b) => a.file.localeCompare(b.file));
  const modelled = rows.filter((r) => r.cannotModel === null);
  const verdict = (r: Row): boolean | null =>
    r.lab?.summary && r.sim?.summary ? outcomesAgree(r.lab.summary.outcome, r.sim.summary.outcome) : null;
  const agree = modelled.filter((r) => verdict(r) === true);
  const disagree = modelled.filter((r) => verdict(r) === false);
  const invalid = rows.filter((r) => r.lab?.summary?.outcome === 'invalid');
  const rerun = rows.filter((r) => (r.earlierLab?.length ?? 0) > 0);
  const labLoads = rows.map((r) => r.lab?.loadAvg1).filter((x): x is number => x !== undefined);
  const heavy = labLoads.filter((x) => x > m.cpus).length;

  const both = (r: Row, f: (s: NonNullable<SideResult['summary']>) => string): string =>
    `${side(r.lab, f)} / ${r.cannotModel !== null ? 'not modelled' : side(r.sim, f)}`;
  const lines: string[] = [
    '# Lab and simulation, per experiment',
    '',
    `Generated by \`npm run agreement\` (benchmarks/agreement.ts) — do not edit by hand. Every`,
    `catalogue experiment (experiments/*.yaml, not the sweep files) once on the local lab and`,
    `once as its simulated twin (\`--runtime sim\`), at the reproduction suite's scale`,
    `(each at its smallest accepted scale, at least ${SUITE_MIN_SCALE}: orchestrator/model/agreement.ts),`,
    `seed of the file, one repetition, nominal capacity on both sides.`,
    '',
    `- **Date**: ${store.startedAt.slice(0, 16).replace('T', ' ')} UTC (start of the full run)`,
    `- **Machine**: ${m.cpuModel}, ${m.cpus} cores, ${round(m.memoryBytes / 2 ** 30, 1)} GiB, ${m.os}, Node ${m.node}`,
    `- **Load average at start**: ${store.loadAvgAtStart.join(', ')} (1, 5, 15 min) on ${m.cpus} cores${(store.loadAvgAtStart[0] ?? 0) > m.cpus ? ": more runnable processes than cores — the machine was shared with other engineers' test runs while this ran" : ''}; each run's own 1-minute load average at its start is in the last section.`,
    ...(rerun.length
      ? [
          `- **Reruns**: ${rerun.length} experiment${rerun.length === 1 ? ' was' : 's were'} run on the lab again at the end (${rerun.map((r) => `${r.name} ×${r.earlierLab!.length + 1}`).join(', ')}), because their first lab run was invalid; the table shows the last run, and every earlier one is kept in the lab validity column and the last section.`,
        ]
      : []),
    `- **Outcome classes compared**: recovered and recovered-late count as one class (both recovered; only the deadline k × D tells them apart); an invalid lab run has no verdict to compare.`,
    `- **Summary**: of ${modelled.length} experiments the simulation models, ${agree.length} agree, ${disagree.length} disagree${disagree.length ? ` (${disagree.map((r) => r.name).join(', ')})` : ''}, ${modelled.length - agree.length - disagree.length} cannot be compared (a side invalid, unmeasured or not run); ${invalid.length} lab run${invalid.length === 1 ? ' was' : 's were'} invalid${invalid.length ? ` (${invalid.map((r) => r.name).join(', ')})` : ''}${heavy ? `; ${heavy} of ${labLoads.length} lab runs started with a 1-minute load average above the ${m.cpus} cores (from ${Math.min(...labLoads)} to ${Math.max(...labLoads)})` : ''}.`,
    '',
    '## Outcomes, lab / simulation',
    '',
    '| experiment | outcome | agree | recovery time, s | amplification after the trigger | baseline goodput, /s | lab validity |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const r of rows) {
    const v = verdict(r);
    lines.push(
      `| \`${r.name}\` | ${both(r, (s) => s.outcome)} | ${agreeCell(r, v)} | ${both(r, (s) => fmt(s.recoveryTimeS))} | ${both(r, (s) => fmt(s.afterTrigger.amplification))} | ${both(r, (s) => fmt(s.baseline.goodputPerS))} | ${validityCell(r.lab)}${r.earlierLab?.length ? ` (a rerun; earlier: ${r.earlierLab.map((x) => validityCell(x)).join('; ')})` : ''}${r.sim?.summary && !r.sim.summary.validity.valid ? `; simulation ${validityCell(r.sim)}` : ''} |`,
    );
  }
  lines.push(
    '',
    'Recovery time: s after the trigger\'s end (docs/metrics.md, Recovery time), "–" when not recovered. Amplification: client-side attempts per origin after the trigger. Lab validity names each failed check with its measured value and limit.',
    '',
    '## What the simulation cannot model',
    '',
  );
  const notModelled = rows.filter((r) => r.cannotModel !== null);
  if (notModelled.length === 0) lines.push('Every catalogue experiment is modelled.');
  for (const r of notModelled) lines.push(`- \`${r.name}\`: ${r.cannotModel}. Run on the lab only.`);
  lines.push(
    '- `step-test` is compared above as the run its file declares (a 10 s pause, no retries). Its own',
    "  claim, the saturation point and the margin, is `metabench calibrate`'s, which measures a real lab",
    '  and refuses `--runtime sim`: the reproduction suite checks it on the lab only.',
    '- Per-process CPU and memory (`soak`) and latency figures are not compared: the simulation runs no',
    "  processes and no CPU (its series come from the simulated api's counters).",
  );
  const simInvalid = rows.filter((r) => r.sim?.summary && !r.sim.summary.validity.valid);
  if (simInvalid.length > 0)
    lines.push(
      '',
      '## Simulated runs that came out invalid',
      '',
      'The simulation keeps its schedule by construction (virtual time, no CPU), so an invalid twin points at the experiment or at a check, not at the machine:',
      '',
      ...simInvalid.map(
        (r) =>
          `- \`${r.name}\`: ${r.sim!.summary!.validity.failed.map((f) => `${f.check} (${f.what}: ${fmt(f.value)}, limit ${fmt(f.limit)})`).join('; ')}.${r.sim!.summary!.validity.failed.some((f) => f.check === 'rate') ? " The rate check counts first attempts sent; an origin the client's circuit breaker refuses sends none, so an open breaker lowers the measured offered rate though the generator kept its schedule." : ''}`,
      ),
    );
  lines.push('', '## Each outcome in one sentence', '');
  for (const r of rows)
    for (const [k, s] of [
      ...(r.earlierLab ?? []).map((x) => ['lab (earlier, replaced by a rerun)', x] as const),
      ['lab', r.lab] as const,
      ['sim', r.sim] as const,
    ])
      if (s)
        lines.push(
          `- \`${r.name}\` ${k} (started ${s.startedAt.slice(11, 19)} UTC, load average ${s.loadAvg1}, ${s.wallS} s): ${s.summary ? s.summary.outcomeReason : `failed: ${s.error}`}`,
        );
  lines.push('');
  return lines.join('\n');
}

function agreeCell(r: Row, v: boolean | null): string {
  if (r.cannotModel !== null) return '— (not modelled)';
  if (v !== null) return v ? 'yes' : '**no**';
  const why = (k: string, x: SideResult | undefined): string | null =>
    !x
      ? `${k} not run`
      : !x.summary
        ? `${k} failed`
        : ['invalid', 'unmeasured'].includes(x.summary.outcome)
          ? `${k} ${x.summary.outcome}`
          : null;
  return `— (${[why('lab', r.lab), why('simulation', r.sim)].filter((w) => w !== null).join(', ')})`;
}

function side(x: SideResult | undefined, f: (s: NonNullable<SideResult['summary']>) => string): string {
  if (!x) return 'not run';
  return x.summary ? f(x.summary) : 'error';
}

function validityCell(x: SideResult | undefined): string {
  if (!x) return 'not run';
  if (!x.summary) return `run failed: ${x.error?.replace(/\|/g, '/').split('\n')[0] ?? ''}`;
  const v = x.summary.validity;
  if (v.valid) return 'valid';
  return `**invalid**: ${v.failed.map((f) => `${f.check} (${f.what}: ${fmt(f.value)}, limit ${fmt(f.limit)})`).join('; ')}`;
}

function fmt(x: number | string | null): string {
  if (x === null) return '–';
  if (typeof x === 'number') return String(round(x, 2));
  return x.replace(/\|/g, '/');
}

await main();
