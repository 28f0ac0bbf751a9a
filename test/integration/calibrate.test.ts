import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CalibrationResult } from '../../orchestrator/calibrate/runCalibration.js';
import { isStepTable, type StepTable } from '../../orchestrator/report/tables.js';
import { runCli, tempDir } from '../helpers/cli.js';

// Issue 7: a scaled step test on the real local lab. The api has a small, known capacity
// (4 workers x 20 ms of constant work = 200/s nominal; a little less in practice: each
// request also costs the api some CPU). Constant arrivals keep 3-second steps from
// being decided by Poisson bursts. About 40 s: 6 steps + 1 bisection + the 150% step.
const EXPERIMENT = `name: calibrate-small
lab:
  api: { workers: 4, work: { dist: constant, mean: 20ms } }
load:
  arrival: constant
  rate: 70% capacity
  productionPeak: 100/s
client:
  timeout: 500ms
  retry: { policy: immediate, maxAttempts: 3 }
schedule:
  warmup: 5s
  baseline: 10s
  trigger: { kind: pause, target: api, duration: 2s }
  observe: 20s
recovery: { within: 5x, tolerance: 10%, window: 2s, hold: 2s }
`;

test('calibrate finds the saturation point near the nominal capacity, writes steps.json and a report, and stores the capacity for % capacity', async () => {
  const dir = tempDir('calibrate');
  const state = join(dir, 'state');
  const file = join(dir, 'small.yaml');
  writeFileSync(file, EXPERIMENT);
  const out = join(dir, 'out');
  const env = { METABENCH_STATE_DIR: state };
  const r = await runCli(
    [
      'calibrate',
      file,
      '--steps',
      '60/s,100/s,140/s,180/s,220/s,260/s',
      '--step-duration',
      '3s',
      '--settle',
      '1s',
      '--refine',
      '1',
      '--out',
      out,
      '--quiet',
    ],
    env,
  );
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.trim(), out);

  const c = JSON.parse(readFileSync(join(out, 'calibration.json'), 'utf8')) as CalibrationResult;
  assert.equal(c.status, 'saturated', c.reason);
  const sat = c.saturation!.offeredPerS;
  // A generous tolerance: this is a measurement on a shared 2-core machine, not a timing test.
  assert.ok(sat >= 100 && sat <= 240, `saturation at ${sat}/s, nominal 200/s`);
  assert.ok(c.saturation!.goodputPerS! >= 0.9 * sat);
  // The client was the experiment's timeout without its retries.
  assert.match(c.client, /per-attempt timeout 500ms, retry none/);
  // Margin against the declared production peak, and goodput at 150% of saturation.
  assert.equal(c.margin.productionPeakPerS, 100);
  assert.equal(c.margin.ratio, Math.round((sat / 100) * 1000) / 1000);
  assert.ok(c.overload, 'the 150% step ran');
  assert.equal(c.overload.offeredPerS, Math.round(1.5 * sat * 1000) / 1000);
  assert.ok(c.overload.goodputPerS !== null && c.overload.goodputPerS < 1.5 * sat * 0.95);
  assert.deepEqual(
    c.steps.filter((s) => s.kind === 'ladder').map((s) => s.ratePerS),
    [60, 100, 140, 180, 220, 260],
  );
  assert.ok(c.steps.every((s) => s.seconds === 2 && s.offered > 0));

  // steps.json has the shape the report draws, with the saturation point.
  const steps = JSON.parse(readFileSync(join(out, 'steps.json'), 'utf8')) as StepTable;
  assert.ok(isStepTable(steps));
  assert.equal(steps.steps.length, c.steps.length);
  assert.deepEqual(steps.saturation, { offeredPerS: sat, goodputPerS: c.saturation!.goodputPerS });

  // The report: the result, the steps, the step figures.
  const md = readFileSync(join(out, 'report.md'), 'utf8');
  assert.match(md, /## Result/);
  assert.match(md, new RegExp(`Saturation point: ${sat} req/s`));
  assert.match(md, /Goodput at 150% of saturation/);
  for (const f of ['steps-goodput', 'steps-latency', 'steps-throughput'])
    assert.ok(existsSync(join(out, 'figures', `${f}.svg`)), f);
  assert.ok(existsSync(join(out, 'report.html')));
  assert.ok(existsSync(join(out, 'timeseries.csv')));
  const manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')) as {
    kind: string;
    runtime: string;
    machine: { cpus: number };
  };
  assert.equal(manifest.kind, 'calibration');
  assert.equal(manifest.runtime, 'local');
  assert.ok(manifest.machine.cpus > 0);

  // `metabench report DIR` renders the calibration folder again, the same.
  const again = await runCli(['report', out]);
  assert.equal(again.code, 0, again.stderr);
  assert.equal(readFileSync(join(out, 'report.md'), 'utf8'), md);

  // Stored with the machine; a later run of the same lab resolves % capacity against it.
  assert.ok('file' in c.stored && existsSync(c.stored.file) && c.stored.file.startsWith(state));
  const dry = await runCli(['run', file, '--dry-run'], env);
  assert.equal(dry.code, 0, dry.stderr);
  assert.match(dry.stdout, new RegExp(`${sat}/s measured; ${sat}/s used for % capacity`));
  assert.match(dry.stdout, new RegExp(`mean ${Math.round(0.7 * sat * 1000) / 1000}/s`));
  // Another lab configuration does not use it.
  const other = await runCli(['run', file, '--dry-run', '--set', 'lab.api.workers=5'], env);
  assert.match(other.stdout, /250\/s used for % capacity/);
  assert.match(other.stdout, /no calibration of this lab on this machine/);
});
