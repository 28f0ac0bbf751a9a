import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { REPO, runCli, tempDir } from '../helpers/cli.js';
import { saveCalibration } from '../../orchestrator/calibrate/store.js';
import { loadExperimentFile } from '../../orchestrator/spec/load.js';

// Issue 34, point 4: beside each catalogue row on a real server, `metabench model` with
// the calibrated capacity predicts the bistable range, and the lab point is drawn over
// it. The lab points are the recorded PHP-FPM runs of the agreement store
// (benchmarks/results/agreement/<name>/run-1: manifest.json and record.json.gz, no
// summary.json), copied into results folders of the shape `metabench run` writes; the
// map's cells are simulated (virtual time), so the test takes seconds.

const STORE = join(REPO, 'benchmarks', 'results', 'agreement');

/** The agreement store's record of `name`, as an experiment's results folder. */
function resultsOf(name: string, root: string): string {
  const dir = join(root, name);
  cpSync(join(STORE, name), dir, { recursive: true });
  return dir;
}

interface ModelJson {
  fluid: {
    range: { capacityPerS: number; lowerPerS: number; upperPerS: number; bistable: boolean };
    capacity: { source: string; usedPerS: number; calibration: { measuredAt: string } | null };
  };
  lab: {
    sweeps: { kind: string; runtime: string; scale: number }[];
    points: { offeredPerS: number; triggerS: number; verdict: string; model: string; agree: boolean }[];
  };
}

const readModel = (out: string): ModelJson =>
  JSON.parse(readFileSync(join(out, 'model.json'), 'utf8')) as ModelJson;

const labLayer = (out: string): Record<string, string>[] =>
  (
    parse(readFileSync(join(out, 'figures', 'sweep-map.csv'), 'utf8'), { columns: true }) as Record<
      string,
      string
    >[]
  ).filter((r) => r.layer === 'lab');

test('php-fpm-retry-storm: with the calibrated capacity its lab run lands in the predicted bistable range, metastable', async () => {
  const root = tempDir('model-over-run');
  const run = resultsOf('php-fpm-retry-storm', join(root, 'results'));
  // A capacity stored for this lab on this machine (a stand-in for `metabench calibrate`'s:
  // PHP-FPM's own time per request puts it a little under the nominal 160/s).
  const state = join(root, 'state');
  saveCalibration(
    loadExperimentFile('experiments/php-fpm-retry-storm.yaml'),
    'local',
    {
      capacityPerS: 152,
      goodputAtSaturationPerS: null,
      experimentFile: 'experiments/php-fpm-retry-storm.yaml',
      resultsDir: join(root, 'calibration'),
      scale: 1,
      measuredAt: new Date('2026-12-06T09:00:00.000Z'),
    },
    { root: state },
  );
  const out = join(root, 'model');
  const r = await runCli(
    ['model', 'experiments/php-fpm-retry-storm.yaml', '--over', run, '--out', out, '--quiet'],
    { METABENCH_STATE_DIR: state },
  );
  assert.equal(r.code, 0, r.stderr);
  assert.match(
    r.stdout,
    /capacity source: measured 152\/s \(calibration .*, measured 2026-12-06T09:00:00\.000Z/,
  );
  const m = readModel(out);
  assert.equal(m.fluid.capacity.source, 'measured');
  assert.ok(Math.abs(m.fluid.range.capacityPerS - 152) < 1e-9);
  assert.equal(m.lab.sweeps[0]!.kind, 'run');
  assert.equal(m.lab.sweeps[0]!.runtime, 'local');
  assert.equal(m.lab.points.length, 1);
  const p = m.lab.points[0]!;
  // The run offered 70% of the nominal 160/s it was planned against; its trigger was 10 s at --scale 0.41.
  assert.equal(p.offeredPerS, 112);
  assert.equal(p.triggerS, 4.1);
  assert.ok(m.fluid.range.bistable);
  assert.ok(
    m.fluid.range.lowerPerS <= p.offeredPerS && p.offeredPerS < m.fluid.range.upperPerS,
    `${p.offeredPerS} in [${m.fluid.range.lowerPerS}, ${m.fluid.range.upperPerS})`,
  );
  assert.equal(p.verdict, 'metastable');
  assert.equal(p.model, 'metastable');
  assert.equal(p.agree, true);
  // The figure draws the lab point over the map, and says which capacity the model took.
  assert.deepEqual(
    labLayer(out).map((x) => [x.x, x.y, x.verdict, x.agreement]),
    [['112', '4.1', 'metastable', 'agrees']],
  );
  const md = readFileSync(join(out, 'model.md'), 'utf8');
  assert.match(md, /Model capacity: measured 152\/s/);
  assert.match(md, /1 run of php-fpm-retry-storm .*runtime local, --scale 0\.41: one lab point/);
});

test('php-fpm-no-retry: no bistable range, and its lab run is drawn as recovered', async () => {
  const root = tempDir('model-over-run-no-retry');
  const run = resultsOf('php-fpm-no-retry', join(root, 'results'));
  const out = join(root, 'model');
  const r = await runCli([
    'model',
    'experiments/php-fpm-no-retry.yaml',
    '--capacity',
    'nominal',
    '--over',
    run,
    '--out',
    out,
    '--quiet',
  ]);
  assert.equal(r.code, 0, r.stderr);
  const m = readModel(out);
  assert.equal(m.fluid.range.bistable, false);
  assert.equal(m.fluid.capacity.source, 'nominal');
  const p = m.lab.points[0]!;
  assert.equal(p.verdict, 'recovered');
  assert.equal(p.model, 'recovered');
  assert.deepEqual(
    labLayer(out).map((x) => [x.x, x.verdict, x.agreement]),
    [['112', 'recovered', 'agrees']],
  );
  // A run of another experiment is refused, naming the folder and both experiments.
  const storm = resultsOf('php-fpm-retry-storm', join(root, 'results'));
  const wrong = await runCli(['model', 'experiments/php-fpm-no-retry.yaml', '--over', storm, '--quiet']);
  assert.equal(wrong.code, 2, wrong.stderr);
  assert.match(wrong.stderr, /run-1: ran experiment php-fpm-retry-storm, not php-fpm-no-retry/);
  assert.doesNotMatch(wrong.stderr, /\n\s+at /);
});
