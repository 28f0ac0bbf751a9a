/**
 * Background-load benchmark (npm run bench:background; issue 31, points 2 and 5): does a
 * catalogue experiment keep its schedule beside other work on the machine, and which
 * measure helps? A background process burns CPU with a duty cycle — none, half a core
 * (busy 50 ms, asleep 50 ms: a browser) or a full core (a build) — while
 * `metabench run EXPERIMENT --scale S` runs in a child process (as a user's would) with:
 * no measure (`--priority normal --no-pin`), the generator's priority (`--priority high`),
 * pinning (`--pin`), or both. Per cell: the late-send share, the schedule lag p99 and the
 * run's validity (with the checks it failed).
 *
 * It writes a markdown table per experiment, with the machine (CPU, cores, kernel, Node) and
 * its load at the start, and a summary of what each experiment tolerated (the README's
 * requirement is read from it) to benchmarks/results/background-<date>.md; it asserts
 * nothing. Options: `--experiment FILE[,FILE…]` (default experiments/retry-storm.yaml),
 * `--scale F` (default: each experiment's smallest accepted scale, as the reproduction
 * suite runs it), `--loads 0,0.5,1`, `--measures none,priority,pin,both` (a subset when
 * time is short), `--experiment catalogue` (every catalogue experiment), `--name SUFFIX`
 * (writes background-<date>-SUFFIX.md, so one day's runs do not overwrite each other). It
 * starts labs: run it alone.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { release, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeMachine } from '../orchestrator/results/manifest.js';
import { busiestProcesses, snapshotProcesses } from '../orchestrator/lab/proc/machineLoad.js';
import type { MachineState, PriorityRecord } from '../orchestrator/results/machineState.js';
import type { Pinning } from '../orchestrator/lab/proc/affinity.js';
import { loadNow, writeGoals } from './goals.js';
import { loadExperimentFile } from '../orchestrator/spec/load.js';
import { suiteScale } from '../orchestrator/model/agreement.js';

const RESULTS = fileURLToPath(new URL('../../benchmarks/results/', import.meta.url));
const REPO = fileURLToPath(new URL('../../', import.meta.url));
const CLI = fileURLToPath(new URL('../orchestrator/cli/main.js', import.meta.url));

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback;
}

/** The catalogue's experiment files (the sweep files are not experiments). */
const catalogue = (): string[] =>
  readdirSync(join(REPO, 'experiments'))
    .filter((f) => f.endsWith('.yaml') && !f.endsWith('.sweep.yaml'))
    .sort()
    .map((f) => join(REPO, 'experiments', f));
const EXPERIMENT_ARG = arg('experiment', join(REPO, 'experiments/retry-storm.yaml'));
const EXPERIMENTS = EXPERIMENT_ARG === 'catalogue' ? catalogue() : EXPERIMENT_ARG.split(',');
const NAME = arg('name', '');
if (NAME !== '' && !/^[a-z0-9-]+$/.test(NAME))
  throw new Error('--name takes lower-case letters, digits and dashes');
const SCALE_ARG = arg('scale', '');
/** The scale an experiment runs at: --scale, else its smallest accepted one. */
const scaleOf = (file: string): number =>
  SCALE_ARG === '' ? suiteScale(loadExperimentFile(file), file) : Number(SCALE_ARG);
const LOADS = arg('loads', '0,0.5,1').split(',').map(Number);
const MEASURES = ['none', 'priority', 'pin', 'both'] as const;
type Measure = (typeof MEASURES)[number];
const CHOSEN = arg('measures', MEASURES.join(',')).split(',') as Measure[];
for (const m of CHOSEN) if (!MEASURES.includes(m)) throw new Error(`--measures: unknown measure "${m}"`);
if (SCALE_ARG !== '' && !(Number(SCALE_ARG) > 0)) throw new Error(`--scale takes a number greater than 0`);

const FLAGS: Record<Measure, string[]> = {
  none: ['--priority', 'normal', '--no-pin'],
  priority: ['--priority', 'high', '--no-pin'],
  pin: ['--priority', 'normal', '--pin'],
  both: ['--priority', 'high', '--pin'],
};

/** The name the background process goes by in /proc (and so in a run's busy list). */
const BACKGROUND_NAME = 'mb-background';

/** A process using `share` of one core: busy for share × 100 ms, asleep for the rest (a full core never sleeps). */
function startBackground(share: number): ChildProcess | undefined {
  if (share <= 0) return undefined;
  const busyMs = Math.round(share * 100);
  const code = `process.title = ${JSON.stringify(BACKGROUND_NAME)};
const busy = ${busyMs}, idle = ${100 - busyMs};
const burn = () => { const end = performance.now() + busy; while (performance.now() < end); if (idle > 0) setTimeout(burn, idle); else setImmediate(burn); };
burn();`;
  return spawn(process.execPath, ['-e', code], { stdio: 'ignore' });
}

interface Summary {
  offered: number;
  lateSends: number;
  scheduleLagMs: { p99: number | null; samples: number };
  outcome: string;
  validity: {
    valid: boolean;
    checks?: { check: string; value: unknown; limit: unknown; ok: boolean }[];
    failed: { check: string; what: string; value: unknown; limit: unknown }[];
  };
  machine?: MachineState;
}

interface Row {
  experiment: string;
  scale: number;
  load: number;
  measure: Measure;
  granted: string;
  pinning: string;
  lateShare: number | null;
  lagP99Ms: number | null;
  valid: boolean | null;
  check4: string;
  failed: string;
  loadAtStart: number | null;
  busyAtStart: string;
}

function fixed(n: number | null, digits: number): string {
  return n === null || !Number.isFinite(n) ? '–' : n.toFixed(digits);
}

function measure(dir: string, experiment: string, scale: number, load: number, m: Measure): Row {
  const name = basename(experiment).replace(/\.ya?ml$/, '');
  const out = join(dir, `out-${name}-${load}-${m}`);
  const bg = startBackground(load);
  try {
    spawnSync(
      process.execPath,
      [
        CLI,
        'run',
        experiment,
        '--scale',
        String(scale),
        '--out',
        out,
        '--quiet',
        '--events',
        'none',
        ...FLAGS[m],
      ],
      { stdio: 'ignore', env: { ...process.env, METABENCH_STATE_DIR: join(dir, 'state') } },
    );
  } finally {
    bg?.kill('SIGKILL');
  }
  const row: Row = {
    experiment: name,
    scale,
    load,
    measure: m,
    granted: '–',
    pinning: '–',
    lateShare: null,
    lagP99Ms: null,
    valid: null,
    check4: '–',
    failed: 'the run wrote no summary',
    loadAtStart: null,
    busyAtStart: '–',
  };
  try {
    const s = JSON.parse(readFileSync(join(out, 'run-1', 'summary.json'), 'utf8')) as Summary;
    const man = JSON.parse(readFileSync(join(out, 'run-1', 'manifest.json'), 'utf8')) as {
      priority?: PriorityRecord;
      pinning: Pinning;
    };
    const g = man.priority?.generator;
    return {
      ...row,
      granted: g ? (g.granted ?? `refused (${g.refused})`) : '–',
      pinning: man.pinning.applied ? 'pinned' : 'not pinned',
      lateShare: s.offered > 0 ? s.lateSends / s.offered : null,
      lagP99Ms: s.scheduleLagMs.p99,
      valid: s.validity.valid,
      check4: lateness(s),
      failed: s.validity.failed
        .map((f) => `${f.what}: ${String(f.value)} (limit ${String(f.limit)})`)
        .join('; '),
      loadAtStart: s.machine?.start.load1 ?? null,
      busyAtStart: s.machine?.start.busy.join(', ') || '–',
    };
  } catch {
    return row;
  }
}

const LOAD_NAME = (l: number): string =>
  l === 0
    ? 'none'
    : l === 1
      ? 'a full core (a build)'
      : `${l * 100}% of a core${l === 0.5 ? ' (a browser)' : ''}`;

function table(rows: Row[]): string {
  const lines = [
    '| background | measures | priority granted | pinning | late sends | schedule lag p99 (ms) | check 4 (lateness) | run | failed checks | load at start | busiest other processes at start |',
    '|---|---|---|---|---:|---:|---|---|---|---:|---|',
  ];
  for (const r of rows)
    lines.push(
      `| ${LOAD_NAME(r.load)} | ${r.measure} | ${r.granted} | ${r.pinning} | ${r.lateShare === null ? '–' : `${fixed(r.lateShare * 100, 2)}%`} | ${fixed(r.lagP99Ms, 1)} | ${r.check4} | ${r.valid === null ? '–' : r.valid ? 'valid' : '**invalid**'} | ${r.failed || '–'} | ${fixed(r.loadAtStart, 2)} | ${r.busyAtStart} |`,
    );
  return lines.join('\n');
}

/** Check 4's word for a run: the replay's verdict on its lateness, or the fixed limit's. */
function lateness(s: Summary): string {
  const c = s.validity.checks?.find((x) => x.check === 'lag');
  if (!c) return '–';
  const v = String(c.value);
  const how = /harmless/.test(v)
    ? 'harmless (replay)'
    : /^replay/.test(v)
      ? 'changed the outcome (replay)'
      : `fixed limit ${String(c.limit)} ms`;
  return `${c.ok ? 'passed' : '**failed**'}: ${how}`;
}

/** The summary line of one experiment: per background load, the measures under which its run was valid. */
function tolerance(rows: Row[], experiment: string): string {
  const mine = rows.filter((r) => r.experiment === experiment);
  const cells = LOADS.map((l) => {
    const valid = mine.filter((r) => r.load === l && r.valid === true).map((r) => r.measure);
    const tried = mine.filter((r) => r.load === l).length;
    return tried === 0 ? '–' : valid.length > 0 ? `valid (${valid.join(', ')})` : '**invalid**';
  });
  return `| ${experiment} | ${mine[0]?.scale ?? '–'} | ${cells.join(' | ')} |`;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'metabench-bgbench-'));
  const load0 = loadNow();
  // What else ran at the start, by name (1 s of /proc), for the record.
  const before = snapshotProcesses();
  await new Promise((r) => setTimeout(r, 1000));
  const busy0 = busiestProcesses(before, snapshotProcesses(), [process.pid]);
  const started = new Date();
  const rows: Row[] = [];
  try {
    for (const experiment of EXPERIMENTS) {
      const scale = scaleOf(experiment);
      for (const load of LOADS)
        for (const m of CHOSEN) {
          const r = measure(dir, experiment, scale, load, m);
          process.stderr.write(
            `${r.experiment} --scale ${scale}, background ${load}, ${m}: late ${fixed((r.lateShare ?? NaN) * 100, 2)}%, lag p99 ${fixed(r.lagP99Ms, 1)} ms, ${r.valid ? 'valid' : `invalid (${r.failed})`}\n`,
          );
          rows.push(r);
        }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const load1 = loadNow();
  const mach = describeMachine();
  const date = started.toISOString().slice(0, 10);
  const names = [...new Set(rows.map((r) => r.experiment))];
  const text = [
    `# Background-load benchmark, ${date}`,
    '',
    `Machine: ${mach.cpuModel}, ${mach.cpus} cores, Linux ${release()}, Node ${mach.node}. Load average (1/5/15 min) at the start: ${load0.join(' / ')} (busiest other processes: ${busy0.join(', ') || 'none seen'}); at the end: ${load1.join(' / ')}.`,
    '',
    `\`metabench run EXPERIMENT --scale S\` at each experiment's smallest accepted scale S (${started.toISOString().slice(11, 16)} UTC on), one run per cell, beside a background process (\`${BACKGROUND_NAME}\`: busy 50 ms, asleep 50 ms for half a core; never asleep for a full core). Measures: none (\`--priority normal --no-pin\`), priority (\`--priority high\`: the generator's threads at niceness −10, the lab at 0), pin (\`--pin\`), both. Late sends: first attempts sent more than 1 ms after their intended time, as a share of the origins; the schedule lag p99 is the whole run's; check 4 is the lateness check (the replay's verdict where the simulation models the experiment, else the fixed limit); the run is valid or invalid by the validity checks of docs/metrics.md, with the checks it failed.`,
    '',
    '## What each experiment tolerated',
    '',
    `| experiment | scale | ${LOADS.map((l) => `background: ${LOAD_NAME(l)}`).join(' | ')} |`,
    `|---|---:|${LOADS.map(() => '---').join('|')}|`,
    ...names.map((n) => tolerance(rows, n)),
    '',
    ...names.flatMap((n) => [
      `## ${n}`,
      '',
      ...LOADS.filter((l) => rows.some((r) => r.experiment === n && r.load === l)).flatMap((l) => [
        `### Background: ${LOAD_NAME(l)}`,
        '',
        table(rows.filter((r) => r.experiment === n && r.load === l)),
        '',
      ]),
    ]),
  ].join('\n');
  process.stdout.write(text);
  writeGoals(
    'background',
    load0,
    rows.map((r) => ({
      figure: `${r.experiment} at --scale ${r.scale}, background ${LOAD_NAME(r.load)}, measures: ${r.measure}`,
      measured: `late sends ${r.lateShare === null ? '–' : `${fixed(r.lateShare * 100, 2)}%`}, lag p99 ${fixed(r.lagP99Ms, 1)} ms, ${r.valid === null ? 'no result' : r.valid ? 'valid' : 'invalid'}`,
      goal: 'valid',
      met: r.valid,
    })),
  );
  mkdirSync(RESULTS, { recursive: true });
  const file = join(RESULTS, `background-${date}${NAME === '' ? '' : `-${NAME}`}.md`);
  writeFileSync(file, text);
  process.stderr.write(`written to ${file}\n`);
}

await main();
