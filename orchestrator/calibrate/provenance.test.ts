import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, tempDir } from '../../test/helpers/cli.js';
import { TEST_STATE_DIR } from '../../test/helpers/state.js';
import { loadExperimentFile } from '../spec/load.js';
import { planRun, type PlannedCapacity } from '../spec/plan.js';
import { stateDir } from '../trigger/journal.js';
import { capacityFor } from './capacity.js';
import { saveCalibration } from './store.js';
import type { Runtime } from '../lab/runtimes.js';

// Issue 17, point 7: which capacity `% capacity` used is printed at a run's start and
// recorded (manifest.json, summary.json), and a capacity stored on this machine never
// reaches a test.

const SMALL = `name: provenance-small
lab: { api: { workers: 4, work: { dist: exponential, mean: 10ms } } }
load: { rate: 50% capacity }
client: { timeout: 300ms, retry: { policy: none } }
schedule: { warmup: 1s, baseline: 2s, trigger: { kind: pause, target: api, duration: 1s }, observe: 3s }
recovery: { within: 3x, tolerance: 35%, window: 1s, hold: 1s }
`;

function store(file: string, runtime: Runtime, root: string, perS: number): string {
  return saveCalibration(
    loadExperimentFile(file),
    runtime,
    {
      capacityPerS: perS,
      goodputAtSaturationPerS: null,
      experimentFile: file,
      resultsDir: join(root, 'results-of-the-calibration'),
      scale: 1,
      measuredAt: new Date('2026-12-01T10:00:00.000Z'),
    },
    { root },
  );
}

test('a calibration stored in the default state folder does not change a test’s plan', async () => {
  // A home of its own stands in for the user's: its default state folder
  // (~/.local/state/metabench, no $XDG_STATE_HOME) holds a calibration of retry-storm's lab.
  const home = tempDir('home');
  const defaultState = join(home, '.local', 'state', 'metabench');
  const file = 'experiments/retry-storm.yaml';
  store(file, 'local', defaultState, 123);
  const asUser = { HOME: home, XDG_STATE_HOME: '' };

  // Where the state folder is not isolated, that calibration is what `% capacity` uses
  // (so the next assertions could fail).
  const leaky = await runCli(['run', '--any-scale', file, '--dry-run'], {
    ...asUser,
    METABENCH_STATE_DIR: '',
  });
  assert.equal(leaky.code, 0, leaky.stderr);
  assert.match(leaky.stdout, /400\/s nominal, 123\/s measured; 123\/s used for % capacity/);

  // The test helper's CLI gets a fresh state folder: the nominal 400/s, 70% = 280/s.
  const isolated = await runCli(['run', '--any-scale', file, '--dry-run'], asUser);
  assert.equal(isolated.code, 0, isolated.stderr);
  assert.match(isolated.stdout, /capacity: 400\/s nominal; 400\/s used for % capacity/);
  assert.match(isolated.stdout, /mean 280\/s/);

  // In this process too (runs made in-process: runExperiment, runSweep).
  const saved = { HOME: process.env.HOME, XDG_STATE_HOME: process.env.XDG_STATE_HOME };
  process.env.HOME = home;
  process.env.XDG_STATE_HOME = '';
  try {
    assert.equal(stateDir(), TEST_STATE_DIR);
    const e = loadExperimentFile(file);
    const plan = planRun(e, { scale: 1, run: 1, ...capacityFor(e, 'local') });
    assert.equal(plan.capacity.source, 'nominal');
    assert.equal(plan.ratePerS, 280);
  } finally {
    for (const [k, v] of Object.entries(saved))
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
  }
});

test('a run prints at its start and records which capacity % capacity used: nominal, or measured from which calibration and when', async () => {
  const dir = tempDir('provenance');
  const file = join(dir, 'small.yaml');
  writeFileSync(file, SMALL);
  const state = join(dir, 'state');
  const run = async (out: string) => {
    const r = await runCli(['run', '--any-scale', file, '--runtime', 'sim', '--out', join(dir, out)], {
      METABENCH_STATE_DIR: state,
    });
    assert.equal(r.code, 0, r.stderr);
    const read = (f: string) =>
      JSON.parse(readFileSync(join(dir, out, 'run-1', f), 'utf8')) as {
        capacity: PlannedCapacity;
        plan?: { ratePerS: number };
        offeredPerS?: number;
      };
    return { stderr: r.stderr, manifest: read('manifest.json'), summary: read('summary.json') };
  };

  // No calibration: the nominal 4 workers / 10 ms = 400/s, 50% = 200/s.
  const nominal = await run('nominal');
  assert.match(
    nominal.stderr,
    /capacity for % capacity: 400\/s nominal: 4 workers \/ 10 ms mean work \(no calibration of this lab on this machine\)/,
  );
  for (const f of [nominal.manifest, nominal.summary]) {
    assert.equal(f.capacity.source, 'nominal');
    assert.equal(f.capacity.usedPerS, 400);
    assert.equal(f.capacity.calibration, null);
  }
  assert.equal(nominal.manifest.plan?.ratePerS, 200);

  // A calibration of this lab (for the simulation's runtime) measured 300/s: 50% = 150/s.
  const calibration = store(file, 'sim', state, 300);
  const measured = await run('measured');
  const line = measured.stderr.split('\n').find((l) => l.includes('capacity for % capacity'));
  assert.equal(
    line?.trim(),
    `capacity for % capacity: 300/s measured (calibration ${calibration}, measured 2026-12-01T10:00:00.000Z; nominal 400/s)`,
  );
  for (const f of [measured.manifest, measured.summary]) {
    assert.equal(f.capacity.source, 'measured');
    assert.equal(f.capacity.usedPerS, 300);
    assert.equal(f.capacity.calibration?.file, calibration);
    assert.equal(f.capacity.calibration?.measuredAt, '2026-12-01T10:00:00.000Z');
  }
  assert.equal(measured.manifest.plan?.ratePerS, 150);
  assert.equal(measured.summary.offeredPerS, 150);

  // An absolute rate: the line still says which capacity, and that nothing used it.
  const absLoud = await runCli(
    ['run', file, '--runtime', 'sim', '--set', 'load.rate=100/s', '--out', join(dir, 'abs2')],
    { METABENCH_STATE_DIR: state },
  );
  assert.match(
    absLoud.stderr,
    /capacity for % capacity: 300\/s measured .* — unused: no rate here is written as % capacity/,
  );
});
