import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join, relative } from 'node:path';
import { ExitCode } from '../../foundation/exitCodes.js';
import { runCli, tempDir, type CliResult } from '../../test/helpers/cli.js';
import { analyseRun, type RunRecord } from '../analysis/analyseRun.js';
import { readRunRecord, RECORD_FILE, writeRunRecord } from '../results/record.js';

// Issue 32, point 1: analysis is a pure function of the recorded data. One simulated
// experiment (two runs, a hypothesis so the success log is recorded) is run through the
// CLI once; each test works on its own copy of the folder. The load (1120/s, a 4 s
// window) puts the noise floor 3/√(goodput × window) at 4.5%, so a tolerance of 5% is one
// the re-analysis may judge by.
const EXPERIMENT = `name: reanalyse-small
lab: { api: { workers: 32, work: { dist: exponential, mean: 20ms }, queue: fifo } }
load: { arrival: poisson, rate: 70% capacity }
client: { timeout: 500ms, retry: { policy: none } }
hypothesis: { goodput: '>= 95% offered', p99: '<= 400ms' }
schedule: { warmup: 2s, baseline: 10s, trigger: { kind: pause, target: api, duration: 2s }, observe: 30s }
recovery: { within: 5x, tolerance: 10%, window: 4s, hold: 4s }
repeat: 2
seed: 42
`;

let RUN = '';

before(async () => {
  const root = tempDir('reanalyse');
  writeFileSync(join(root, 'small.yaml'), EXPERIMENT);
  RUN = join(root, 'run');
  const r = await runCli(['run', join(root, 'small.yaml'), '--runtime', 'sim', '--out', RUN, '--quiet']);
  assert.equal(r.code, 0, r.stderr);
});

/** A copy of the run's folder, for one test to change. */
function copy(name: string): string {
  const to = join(tempDir(`reanalyse-${name}`), 'results');
  cpSync(RUN, to, { recursive: true });
  return to;
}

/** Every file under `dir`, by its path relative to it. */
function files(dir: string, root = dir): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) for (const [k, v] of files(p, root)) out.set(k, v);
    else out.set(relative(root, p), readFileSync(p));
  }
  return out;
}

function json(file: string): Record<string, unknown> {
  return JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
}

/** The paths (a.b.0.c) at which two JSON values differ. */
function differingPaths(a: unknown, b: unknown, at = ''): string[] {
  if (JSON.stringify(a) === JSON.stringify(b)) return [];
  if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object') {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].flatMap((k) =>
      differingPaths(
        (a as Record<string, unknown>)[k],
        (b as Record<string, unknown>)[k],
        at ? `${at}.${k}` : k,
      ),
    );
  }
  return [at];
}

function assertNoStack(r: CliResult): void {
  assert.doesNotMatch(r.stderr, /\n\s+at .*\.js:\d+/, r.stderr);
}

test('report DIR with no --set reproduces every file of the run byte for byte, summary.json and the report included', async () => {
  const dir = copy('same');
  const was = files(dir);
  // The report is written again from nothing, not left in place.
  rmSync(join(dir, 'report.md'));
  rmSync(join(dir, 'figures'), { recursive: true });
  rmSync(join(dir, 'data'), { recursive: true });
  const r = await runCli(['report', dir]);
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stderr, /differs from the one written at run time/);
  const now = files(dir);
  assert.deepEqual([...now.keys()].sort(), [...was.keys()].sort());
  for (const [f, bytes] of was) assert.ok(now.get(f)!.equals(bytes), `${f} differs after metabench report`);
  assert.ok(was.has('run-1/summary.json') && was.has('summary.json') && was.has('report.md'));
});

test('a run record read back and written again is the same record, and analyses to the same summary.json', () => {
  for (const run of ['run-1', 'run-2']) {
    const from = join(RUN, run);
    const record = readRunRecord(from);
    // What the analysis needs beyond plain JSON is there: the success log (a hypothesis), of typed columns.
    assert.ok(record.recorded.successes, 'the success log is recorded');
    assert.ok(
      Object.values(record.recorded.successes.columns()).some((c) => c instanceof Float64Array),
      'its columns are typed arrays',
    );
    const to = tempDir('record-again');
    writeRunRecord(to, record);
    const again = readRunRecord(to);
    assert.deepEqual(comparable(again), comparable(record));
    const summary = analyseRun(again);
    assert.deepEqual(summary, analyseRun(record));
    assert.equal(`${JSON.stringify(summary, null, 2)}\n`, readFileSync(join(from, 'summary.json'), 'utf8'));
  }
});

/** A record with its success log as its columns (the log's spare capacity is no part of it). */
function comparable(r: RunRecord): unknown {
  const { successes, ...recorded } = r.recorded;
  return { ...r, recorded: { ...recorded, successes: successes?.columns() } };
}

// What a recovery criterion may change in a run's summary, and why; everything else is measured and must not move.
const CRITERION_FIELDS = [
  'recoveryDeadlineS', // within × the trigger's duration
  'recovered',
  'recoveryTimeS',
  'recoveryReason',
  'metastable',
  'outcome',
  'outcomeReason',
  'sustainingEffect',
  'projectedRecoveryS',
  'projection',
  'mechanisms', // the verdict and its explanation
  'hypothesis', // the "after recovery" window starts at the recovery
  'validity',
  'usable',
  'warnings', // the checks on the deadline (observed past it)
  'sensitivity', // its own criterion, and which cells are the run's
];
const MEASURED_FIELDS = [
  'experiment',
  'runtime',
  'run',
  'seed',
  'scale',
  'trend',
  'offered',
  'recorded',
  'attempts',
  'lateSends',
  'omissionFactor',
  'scheduleLagMs',
  'load',
  'clientWait',
  'outcomes',
  'capacity',
  'offeredPerS',
  'baseline',
  'trigger',
  'triggers',
  'afterTrigger',
  'observedAfterS',
  'policies',
  'classes',
  'machine',
];
// The folder's summary.json across runs: the same split (its rates are over the valid runs, and no run changed validity here).
const AGGREGATE_CRITERION = [
  'recoveryDeadlineS',
  'recoveryTimeS',
  'recovered',
  'metastable',
  'outcomeCounts',
  'outcomeSummary',
  'validRuns',
  'invalid',
  'usable',
  'warnings',
  'hypothesis',
  'sensitivity',
];
const AGGREGATE_MEASURED = [
  'experiment',
  'runtime',
  'runs',
  'seeds',
  'scale',
  'capacity',
  'offeredPerS',
  'trigger',
  'offered',
  'recorded',
  'attempts',
  'lateSends',
  'omissionFactor',
  'baseline',
  'afterTrigger',
  'policies',
];

/**
 * Re-analyses a copy with `set`, checks that only criterion fields moved (every field is
 * one or the other, so a new field must be placed), and returns the differing paths of
 * run-1's summary and of the folder's.
 */
async function reanalysedWith(
  set: string,
): Promise<{ run: string[]; top: string[]; dir: string; out: string }> {
  const dir = copy(set.replace(/\W/g, '-'));
  const r = await runCli(['report', dir, '--set', set, '--pdf', 'none']);
  assert.equal(r.code, 0, r.stderr);
  const out = r.stdout.trim();
  assert.match(out, /reanalysis-[0-9a-f]{8}$/);
  assert.equal(
    readFileSync(join(dir, 'run-1', 'summary.json'), 'utf8'),
    readFileSync(join(RUN, 'run-1', 'summary.json'), 'utf8'),
  );
  for (const [file, criterion, measured] of [
    ['run-1/summary.json', CRITERION_FIELDS, MEASURED_FIELDS],
    ['run-2/summary.json', CRITERION_FIELDS, MEASURED_FIELDS],
    ['summary.json', AGGREGATE_CRITERION, AGGREGATE_MEASURED],
  ] as const) {
    const a = json(join(RUN, file));
    const b = json(join(out, file));
    for (const k of Object.keys(b))
      assert.ok(
        (criterion as readonly string[]).includes(k) || (measured as readonly string[]).includes(k),
        `${file}: unplaced field ${k}`,
      );
    for (const k of measured)
      assert.deepEqual(b[k], a[k], `${file}: ${k} is measured, yet ${set} changed it`);
    const moved = differingPaths(a, b);
    for (const p of moved)
      assert.ok((criterion as readonly string[]).includes(p.split('.')[0]!), `${file}: ${p} changed`);
  }
  // The new folder holds its report and re-analyses on its own, to the same bytes.
  for (const f of ['report.md', 'report.html', 'run-1/record.json.gz', 'run-1/timeseries.csv'])
    assert.ok(existsSync(join(out, f)), f);
  const manifest = json(join(out, 'run-1', 'manifest.json')) as {
    reanalysis: { of: string; overrides: string[] };
  };
  assert.deepEqual(manifest.reanalysis, { of: dir, overrides: [set] });
  const summaryBefore = readFileSync(join(out, 'summary.json'), 'utf8');
  const again = await runCli(['report', out, '--pdf', 'none']);
  assert.equal(again.code, 0, again.stderr);
  assert.doesNotMatch(again.stderr, /differs/);
  assert.equal(readFileSync(join(out, 'summary.json'), 'utf8'), summaryBefore);
  return {
    run: differingPaths(json(join(RUN, 'run-1/summary.json')), json(join(out, 'run-1/summary.json'))),
    top: differingPaths(json(join(RUN, 'summary.json')), json(join(out, 'summary.json'))),
    dir,
    out,
  };
}

test('--set recovery.within=2x changes only what the deadline changes: rates, latency, windows and policies stay', async () => {
  const { run, top, out } = await reanalysedWith('recovery.within=2x');
  const s = json(join(out, 'run-1', 'summary.json')) as {
    recoveryDeadlineS: number;
    sensitivity: { criterion: { k: number } };
  };
  assert.equal(s.recoveryDeadlineS, 4); // 2 × the 2 s pause, where the run said 5 × 2 s
  assert.equal(s.sensitivity.criterion.k, 2);
  assert.ok(run.includes('recoveryDeadlineS') && run.includes('sensitivity.criterion.k'), run.join(', '));
  assert.ok(top.includes('recoveryDeadlineS'), top.join(', '));
});

test('--set recovery.tolerance=5% changes only what the tolerance changes', async () => {
  const { run, out } = await reanalysedWith('recovery.tolerance=5%');
  const s = json(join(out, 'run-1', 'summary.json')) as { sensitivity: { criterion: { tolerance: number } } };
  assert.equal(s.sensitivity.criterion.tolerance, 0.05);
  assert.ok(run.includes('sensitivity.criterion.tolerance'), run.join(', '));
});

test('a bad --set is refused (exit 3) naming the field, before any folder is made, without a stack trace', async () => {
  const dir = copy('bad');
  const cases: [string, RegExp][] = [
    [
      'load.rate=50% capacity',
      /run-1\/manifest\.json: load\.rate: .*load changes what the run measured.*recovery\.\*, validity\.\*, hypothesis\.\*/,
    ],
    [
      'recovery.within=soon',
      /run-1\/manifest\.json: recovery\.within: .*\(from --set recovery\.within=soon\)/,
    ],
    ['recovery.windw=2s', /recovery\.windw: .*no field "windw"; did you mean "window"\?/],
    ['recovery.within', /"recovery\.within" is not path=value/],
    // Under the noise floor 3/√(1120/s × 4 s) = 4.5%: refused as the experiment file would be.
    [
      'recovery.tolerance=2%',
      /recovery\.tolerance: recovery window 4 s .* noise floor .* raise recovery\.tolerance to 5%/,
    ],
  ];
  for (const [set, message] of cases) {
    const r = await runCli(['report', dir, '--set', set]);
    assert.equal(r.code, ExitCode.invalidSpec, `${set}: ${r.stderr}`);
    assert.match(r.stderr, message, set);
    assertNoStack(r);
  }
  assert.deepEqual(
    readdirSync(dir).filter((f) => f.startsWith('reanalysis-')),
    [],
  );
});

test('--set on a folder whose runs kept no record, or on none of runs, is a usage error naming what is missing', async () => {
  const dir = copy('unrecorded');
  rmSync(join(dir, 'run-2', RECORD_FILE));
  const r = await runCli(['report', dir, '--set', 'recovery.within=2x']);
  assert.equal(r.code, ExitCode.usage, r.stderr);
  assert.match(
    r.stderr,
    /run-2\/record\.json\.gz: missing: this run was recorded by a metabench that kept no record/,
  );
  assertNoStack(r);
  // Without --set it still renders (as a folder from before records does).
  const plain = await runCli(['report', dir, '--pdf', 'none']);
  assert.equal(plain.code, 0, plain.stderr);

  const empty = tempDir('reanalyse-empty');
  const e = await runCli(['report', empty, '--set', 'recovery.within=2x']);
  assert.equal(e.code, ExitCode.usage, e.stderr);
  assert.match(e.stderr, /no run-<i>\/ folder/);
  assertNoStack(e);
});

test("--set on a sweep's folder is refused, naming its points to re-analyse one by one; without, each point's summaries are recomputed", async () => {
  const sweep = join(tempDir('reanalyse-sweep'), 'sweep');
  mkdirSync(sweep);
  cpSync(RUN, join(sweep, 'point-1'), { recursive: true });
  cpSync(RUN, join(sweep, 'point-2'), { recursive: true });
  writeFileSync(join(sweep, 'sweep.json'), '{}');
  const r = await runCli(['report', sweep, '--set', 'recovery.within=2x']);
  assert.equal(r.code, ExitCode.usage, r.stderr);
  assert.match(r.stderr, /a sweep's folder: --set and --out re-analyse one experiment folder/);
  assert.match(r.stderr, /metabench report .*point-1 --set … \(points: point-1, point-2\)/);
  assertNoStack(r);
  assert.deepEqual(readdirSync(sweep).sort(), ['point-1', 'point-2', 'sweep.json']);
  assert.equal(r.stdout, '');
  // Without --set, each point's summaries are recomputed from its records (here one was
  // damaged after the run), and the report renders from the sweep's table.
  writeFileSync(
    join(sweep, 'sweep.json'),
    JSON.stringify({
      design: 'grid',
      factors: [{ name: 'load.rate', unit: '' }],
      figures: [{ name: 'goodput', unit: '/s' }],
      rows: [],
    }),
  );
  writeFileSync(join(sweep, 'point-2', 'run-1', 'summary.json'), '{}\n');
  const plain = await runCli(['report', sweep, '--pdf', 'none']);
  assert.equal(plain.code, 0, plain.stderr);
  assert.match(
    plain.stderr,
    /point-2\/run-1\/summary\.json recomputed from the record differs .*: rewritten/,
  );
  assert.match(plain.stderr, /sweep\.json, sweep\.csv and sweep\.md still show the verdicts of the run/);
  assert.doesNotMatch(plain.stderr, /point-1\/run-1\/summary\.json/);
  assert.equal(
    readFileSync(join(sweep, 'point-2', 'run-1', 'summary.json'), 'utf8'),
    readFileSync(join(RUN, 'run-1', 'summary.json'), 'utf8'),
  );
  // A point is an experiment folder, and re-analyses.
  const p = await runCli(['report', join(sweep, 'point-2'), '--set', 'recovery.within=2x', '--pdf', 'none']);
  assert.equal(p.code, 0, p.stderr);
  assert.ok(existsSync(join(p.stdout.trim(), 'summary.json')));
});
