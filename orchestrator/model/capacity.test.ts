import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { runCli, tempDir } from '../../test/helpers/cli.js';
import { capacityFor } from '../calibrate/capacity.js';
import { saveCalibration } from '../calibrate/store.js';
import { loadExperimentFile } from '../spec/load.js';
import { planRun } from '../spec/plan.js';
import { BenchError } from '../../foundation/errors.js';
import { bistableRange } from './fluid.js';
import { predict } from './predict.js';

// Issue 34, point 4: `metabench model` with the calibrated capacity. A real server's
// capacity is what `metabench calibrate` measured, not c/S; the model keeps c and takes
// the work that gives the measured capacity.

const FILE = 'experiments/php-fpm-retry-storm.yaml'; // 16 workers × 100 ms constant: nominal 160/s

function calibrated(perS: number): string {
  const root = tempDir('model-capacity');
  saveCalibration(
    loadExperimentFile(FILE),
    'local',
    {
      capacityPerS: perS,
      goodputAtSaturationPerS: null,
      experimentFile: FILE,
      resultsDir: join(root, 'the-calibration'),
      scale: 1,
      measuredAt: new Date('2026-12-01T10:00:00.000Z'),
    },
    { root },
  );
  return root;
}

function predictionWith(mode: 'auto' | 'nominal' | 'measured', root: string): ReturnType<typeof predict> {
  const e = loadExperimentFile(FILE);
  return predict(planRun(e, { scale: 1, run: 1, ...capacityFor(e, 'local', mode, root) }));
}

test('the model takes the measured capacity when this lab was calibrated: its edges and offered load move with it', () => {
  const root = calibrated(140);
  const p = predictionWith('auto', root);
  assert.equal(p.capacity.source, 'measured');
  assert.ok(Math.abs(p.range.capacityPerS - 140) < 1e-9, `${p.range.capacityPerS}`);
  assert.ok(Math.abs(p.range.lowerPerS - 35) < 1e-9, `${p.range.lowerPerS}`); // cμ/m, m = 4
  // The upper edge is the one of the same pool with the work that gives 140/s: 16 / 140 s.
  const stretched = bistableRange({
    workers: 16,
    work: { dist: 'constant', meanMs: (16 / 140) * 1000 },
    timeoutMs: 500,
    attempts: 4,
  });
  assert.ok(Math.abs(p.range.upperPerS - stretched.upperPerS) < 1e-9);
  // 70% capacity is 70% of the measured one, as `metabench run` would offer it.
  assert.ok(Math.abs(p.offeredPerS - 98) < 1e-9, `${p.offeredPerS}`);
  assert.equal(p.region, 'bistable');

  const n = predictionWith('nominal', root);
  assert.equal(n.capacity.source, 'nominal');
  assert.equal(n.workScale, 1);
  assert.ok(Math.abs(n.range.capacityPerS - 160) < 1e-9);
  assert.ok(Math.abs(n.offeredPerS - 112) < 1e-9);
  assert.ok(n.range.upperPerS > p.range.upperPerS);
});

test('without a calibration: auto is the nominal capacity, measured is an error naming metabench calibrate', () => {
  const empty = tempDir('model-capacity-none');
  assert.equal(predictionWith('auto', empty).capacity.source, 'nominal');
  assert.throws(
    () => predictionWith('measured', empty),
    (err: unknown) => err instanceof BenchError && /metabench calibrate/.test(`${err.message} ${err.hint}`),
  );
});

test('metabench model --capacity: the output says which capacity and where it came from', async () => {
  const root = calibrated(140);
  const out = tempDir('model-capacity-out');
  const m = await runCli(['model', FILE, '--no-map', '--out', join(out, 'm')], { METABENCH_STATE_DIR: root });
  assert.equal(m.code, 0, m.stderr);
  assert.match(m.stdout, /capacity cμ: 140 req\/s/);
  assert.match(
    m.stdout,
    /capacity source: measured 140\/s \(calibration .*\.json, measured 2026-12-01T10:00:00\.000Z; nominal 160\/s/,
  );
  assert.match(m.stdout, /lower edge cμ\/m: 35 origins\/s/);
  const n = await runCli(['model', FILE, '--no-map', '--capacity', 'nominal', '--out', join(out, 'n')], {
    METABENCH_STATE_DIR: root,
  });
  assert.equal(n.code, 0, n.stderr);
  assert.match(n.stdout, /capacity cμ: 160 req\/s/);
  assert.match(
    n.stdout,
    /capacity source: 160\/s nominal: 16 workers \/ 100 ms mean work \(--capacity nominal\)/,
  );
  const none = await runCli(['model', FILE, '--no-map', '--capacity', 'measured', '--out', join(out, 'x')]);
  assert.notEqual(none.code, 0);
  assert.match(none.stderr, /--capacity measured: .*no calibration on this machine/);
  assert.match(none.stderr, /metabench calibrate/);
  assert.doesNotMatch(none.stderr, /\n\s+at /);
});
