import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { registerRuntimes } from '../../orchestrator/cli/runtimes.js';
import { readRunRecord, writeRunRecord } from '../../orchestrator/results/record.js';
import { tempDir } from '../../test/helpers/cli.js';
import { checkAgreement, type Paths } from './check.js';
import { compareStores, reanalyseStore } from './reanalyse.js';
import { render } from './render.js';
import type { Rows } from './rows.js';
import { runSide } from './runs.js';
import { KEPT_FILES, pack, readStore, STORE_FILE, writeStore } from './store.js';

registerRuntimes();

// Issue 32, point 7: the agreement's table regenerated from its committed store alone.
// Stand-ins for the lab: two short experiments, each run by runSide with runtime 'sim' for
// both sides (a simulated run folder holds the same record as a lab run's), packed into a
// store; each test works on its own copy of the store and the doc.
const RECOVERS = `name: tiny-recovers
lab: { api: { workers: 4, work: { dist: exponential, mean: 20ms }, queue: fifo } }
load: { arrival: poisson, rate: 70% capacity }
client: { timeout: 500ms, retry: { policy: none } }
schedule: { warmup: 2s, baseline: 10s, trigger: { kind: pause, target: api, duration: 2s }, observe: 30s }
recovery: { within: 5x, tolerance: 10%, window: 8s, hold: 8s }
seed: 7
`;
const STORM = `name: tiny-storm
lab: { api: { workers: 4, work: { dist: exponential, mean: 20ms }, queue: fifo } }
load: { arrival: poisson, rate: 70% capacity }
client: { timeout: 500ms, retry: { policy: immediate, maxAttempts: 4 } }
schedule: { warmup: 5s, baseline: 20s, trigger: { kind: pause, target: api, duration: 10s }, observe: 60s }
recovery: { within: 2x, tolerance: 15%, window: 5s, hold: 10s }
seed: 11
`;
const NAMES = ['tiny-recovers', 'tiny-storm'];
const AGREEMENT = fileURLToPath(new URL('../agreement.js', import.meta.url));

let ROOT = '';
let RESULTS = '';
let STORE = '';

before(async () => {
  ROOT = tempDir('agreement');
  mkdirSync(join(ROOT, 'experiments'));
  writeFileSync(join(ROOT, 'experiments', 'tiny-recovers.yaml'), RECOVERS);
  writeFileSync(join(ROOT, 'experiments', 'tiny-storm.yaml'), STORM);
  RESULTS = join(ROOT, 'results', 'agreement');
  const rows: Rows = {
    machine: { hostname: 'h', cpuModel: 'cpu', cpus: 2, memoryBytes: 2 ** 30, os: 'os', node: 'v20' },
    startedAt: '2026-12-05T20:00:00.000Z',
    loadAvgAtStart: [1, 1, 1],
    rows: {},
  };
  for (const name of NAMES) {
    const file = `experiments/${name}.yaml`;
    const lab = await runSide(ROOT, file, join(RESULTS, name, 'lab'), 'sim');
    const sim = await runSide(ROOT, file, join(RESULTS, name, 'sim'), 'sim');
    assert.equal(lab.error, null, lab.error ?? '');
    rows.rows[name] = { name, file, cannotModel: null, lab, sim };
  }
  writeFileSync(join(RESULTS, 'rows.json'), JSON.stringify(rows, null, 2));
  STORE = join(ROOT, 'store');
  const s = pack(RESULTS, STORE);
  writeFileSync(join(ROOT, 'agreement.md'), render(s));
});

/** A copy of the store and its doc, for one test to change; results/agreement/ is not copied. */
function copy(): Paths {
  const to = tempDir('agreement-copy');
  cpSync(STORE, join(to, 'store'), { recursive: true });
  cpSync(join(ROOT, 'agreement.md'), join(to, 'agreement.md'));
  return {
    root: ROOT,
    results: join(to, 'no-results'),
    store: join(to, 'store'),
    doc: join(to, 'agreement.md'),
  };
}

/** The table of a rendered doc: its rows, by experiment. */
function table(doc: string): string[] {
  return doc.split('\n').filter((l) => /^\| `/.test(l));
}

test('the fixture has one outcome of each class, so the table is not trivially the same', () => {
  const s = readStore(STORE);
  assert.deepEqual(
    NAMES.map((n) => s.rows[n]!.lab!.summary!.outcome),
    ['recovered', 'metastable'],
  );
});

test('the store keeps the record, manifest and series of each lab run and nothing re-analysis makes again', () => {
  for (const name of NAMES) {
    assert.deepEqual(readdirSync(join(STORE, name)), ['run-1']);
    assert.deepEqual(readdirSync(join(STORE, name, 'run-1')).sort(), [...KEPT_FILES].sort());
  }
  assert.deepEqual(readdirSync(STORE).sort(), [...NAMES, STORE_FILE].sort());
});

test('pack, then re-analysis from the store alone gives the same store and the same table', async () => {
  const p = copy();
  // A checkout with the experiment files and the store, and no results/agreement/.
  const root = tempDir('agreement-checkout');
  cpSync(join(ROOT, 'experiments'), join(root, 'experiments'), { recursive: true });
  const stored = readStore(p.store);
  const again = await reanalyseStore(root, p.store, stored);
  assert.deepEqual(compareStores(p.store, stored, again), []);
  assert.deepEqual(table(render(again)), table(render(stored)));
  assert.equal(table(render(stored)).length, 2);
  // The re-analysed doc says so, and by which revision.
  assert.match(
    render(again),
    /- \*\*Re-analysed\*\*: the lab column is each lab run's record analysed again by/,
  );
  assert.match(render(stored), /- \*\*Re-analysed\*\*: not since the run/);
});

test('--check names the experiment whose stored lab figure is not what its record re-analyses to', async () => {
  const p = copy();
  const s = readStore(p.store);
  const lab = s.rows['tiny-storm']!.lab!;
  const summary = { ...lab.summary!, afterTrigger: { ...lab.summary!.afterTrigger, amplification: 1 } };
  s.rows['tiny-storm']!.lab = { ...lab, summary };
  writeStore(p.store, s);
  const problems = await checkAgreement(p);
  assert.ok(
    problems.some((x) =>
      /^tiny-storm \(lab\): afterTrigger\.amplification: .* says 1, re-analysing .*record\.json\.gz gives/.test(
        x,
      ),
    ),
    problems.join('\n'),
  );
  // The doc, rendered before the change, is no longer what the store renders: that row.
  assert.ok(
    problems.some((x) => x.includes('(tiny-storm): the store renders:')),
    problems.join('\n'),
  );
  assert.ok(!problems.some((x) => x.includes('tiny-recovers')), problems.join('\n'));
});

test('--check names the experiment whose record analyses to another figure than the store says', async () => {
  const p = copy();
  const run = join(p.store, 'tiny-recovers', 'run-1');
  const r = readRunRecord(run);
  // The same measurements judged by another criterion: the re-analysis changes, the store does not.
  writeRunRecord(run, {
    ...r,
    plan: { ...r.plan, recovery: { ...r.plan.recovery, within: 0.0001, tolerance: 0.5 } },
  });
  const problems = await checkAgreement(p);
  assert.ok(problems.length > 0);
  assert.ok(
    problems.every((x) => x.startsWith('tiny-recovers (lab): ')),
    problems.join('\n'),
  );
});

test('--check names the experiment whose simulated column is not what this revision simulates', async () => {
  const p = copy();
  const s = readStore(p.store);
  const sim = s.rows['tiny-recovers']!.sim!;
  s.rows['tiny-recovers']!.sim = { ...sim, summary: { ...sim.summary!, outcome: 'metastable' } };
  writeStore(p.store, s);
  const problems = await checkAgreement(p);
  assert.ok(
    problems.includes(
      `tiny-recovers (sim): outcome: ${join(p.store, STORE_FILE)} says "metastable", this revision's simulator gives "recovered"`,
    ),
    problems.join('\n'),
  );
});

test('--check names the experiment of a line of the doc edited by hand, with its line', async () => {
  const p = copy();
  const doc = readFileSync(p.doc, 'utf8');
  const edited = doc.replace(/^(\| `tiny-storm` \| )metastable/m, '$1recovered');
  assert.notEqual(edited, doc);
  writeFileSync(p.doc, edited);
  const problems = await checkAgreement(p);
  const line = edited.split('\n').findIndex((l) => l.startsWith('| `tiny-storm`')) + 1;
  assert.deepEqual(
    problems.map((x) => x.slice(0, x.indexOf(':', p.doc.length + 1 + String(line).length + 1))),
    [`${p.doc}:${line} (tiny-storm)`, `${p.doc}:${line} (tiny-storm)`],
  );
});

test('--check: exit 1 and the experiment named on a tampered store, exit 0 on a true one (the program)', () => {
  const p = copy();
  const args = [AGREEMENT, '--check', '--root', p.root, '--store', p.store, '--doc', p.doc];
  const ok = spawnSync(process.execPath, args, { encoding: 'utf8' });
  assert.equal(ok.status, 0, ok.stderr);
  const s = readStore(p.store);
  const lab = s.rows['tiny-recovers']!.lab!;
  s.rows['tiny-recovers']!.lab = {
    ...lab,
    summary: { ...lab.summary!, baseline: { ...lab.summary!.baseline, goodputPerS: 1 } },
  };
  writeStore(p.store, s);
  const bad = spawnSync(process.execPath, args, { encoding: 'utf8' });
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /tiny-recovers \(lab\): baseline\.goodputPerS: .* says 1, re-analysing/);
  assert.match(bad.stderr, /npm run agreement -- --reanalyse/);
  assert.doesNotMatch(bad.stderr, /\n\s+at /, 'no stack trace');
});

test('the doc names the one commit the lab runs were made at, and says so when they were not one', () => {
  const one = render(readStore(STORE));
  assert.match(
    one,
    /- \*\*Lab runs made at\*\*: all 2 at commit `[0-9a-f]{40}`( with uncommitted changes)?\./,
  );
  // One lab run made at another revision.
  const results = join(tempDir('agreement-mixed'), 'results');
  cpSync(RESULTS, results, { recursive: true });
  const manifest = join(results, 'tiny-storm', 'lab', 'run-1', 'manifest.json');
  const m = JSON.parse(readFileSync(manifest, 'utf8')) as Record<string, unknown>;
  writeFileSync(manifest, JSON.stringify({ ...m, gitRevision: 'f'.repeat(40) }));
  const mixed = render(pack(results, join(results, '..', 'store')));
  assert.match(
    mixed,
    /- \*\*Lab runs made at\*\*: \*\*not one revision\*\*: 1 at `[0-9a-f]{40}`.* \(tiny-recovers\); 1 at `f{40}` \(tiny-storm\)\./,
  );
});

test('a lab run of another version of the experiment file is said so, and --check names it', async () => {
  const p = copy();
  const root = tempDir('agreement-edited');
  cpSync(join(ROOT, 'experiments'), join(root, 'experiments'), { recursive: true });
  writeFileSync(join(root, 'experiments', 'tiny-storm.yaml'), STORM.replace('seed: 11', 'seed: 12'));
  const again = await reanalyseStore(root, p.store, readStore(p.store));
  assert.equal(
    again.rows['tiny-storm']!.labPlanChanged,
    'experiments/tiny-storm.yaml changed since the lab ran it',
  );
  assert.equal(again.rows['tiny-recovers']!.labPlanChanged, undefined);
  assert.match(
    render(again),
    /Lab runs of another version of the experiment\*\*: tiny-storm \(experiments\/tiny-storm\.yaml changed/,
  );
  const problems = compareStores(p.store, readStore(p.store), again);
  assert.ok(
    problems.some((x) => x.startsWith('tiny-storm: experiments/tiny-storm.yaml changed')),
    problems.join('\n'),
  );
  // An experiment file gone from the catalogue: named, not a crash.
  rmSync(join(root, 'experiments', 'tiny-recovers.yaml'));
  const gone = compareStores(
    p.store,
    readStore(p.store),
    await reanalyseStore(root, p.store, readStore(p.store)),
  );
  assert.ok(
    gone.includes(
      'tiny-recovers: experiments/tiny-recovers.yaml is no longer in the catalogue; ' +
        `${join(p.store, STORE_FILE)} does not say so`,
    ),
    gone.join('\n'),
  );
});
