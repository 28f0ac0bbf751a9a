import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BenchError } from '../../foundation/errors.js';
import { describeMachine } from '../results/manifest.js';
import { dryRun, formatDryRun } from '../spec/dryRun.js';
import { parseExperiment } from '../spec/load.js';
import { planRun } from '../spec/plan.js';
import { capacityFor } from './capacity.js';
import {
  calibrationFile,
  findCalibration,
  labKey,
  machineId,
  measuredCapacity,
  saveCalibration,
} from './store.js';

const experiment = (api: string, extra = '') =>
  parseExperiment(
    [
      'name: small',
      'lab:',
      `  api: ${api}`,
      'load:',
      '  rate: 70% capacity',
      extra,
      'client: { timeout: 500ms }',
      'schedule:',
      '  warmup: 5s',
      '  baseline: 10s',
      '  trigger: { kind: pause, target: api, duration: 2s }',
      '  observe: 20s',
      'recovery: { within: 5x, tolerance: 10%, window: 2s, hold: 2s }',
    ].join('\n'),
    'small.yaml',
  );

const four = '{ workers: 4, work: { dist: constant, mean: 20ms } }';
const root = () => mkdtempSync(join(tmpdir(), 'metabench-store-'));
const machine = describeMachine();
const save = (e: ReturnType<typeof experiment>, r: string, capacityPerS: number) =>
  saveCalibration(
    e,
    'local',
    {
      capacityPerS,
      goodputAtSaturationPerS: capacityPerS - 2,
      experimentFile: 'small.yaml',
      resultsDir: '/tmp/results/x',
      scale: 1,
      measuredAt: new Date('2026-12-01T10:00:00Z'),
    },
    { root: r, machine },
  );

test('a calibration is found by its lab configuration on its machine', () => {
  const r = root();
  const e = experiment(four);
  assert.equal(findCalibration(e, 'local', { root: r, machine }), null);
  const file = save(e, r, 185);
  assert.equal(file, calibrationFile(e, 'local', { root: r, machine }));
  assert.ok(file.includes(machineId(machine)) && file.endsWith(`${labKey(e, 'local')}.json`));
  const found = findCalibration(e, 'local', { root: r, machine });
  assert.ok(found);
  assert.equal(found.capacityPerS, 185);
  assert.equal(found.machine.cpuModel, machine.cpuModel);
  assert.equal(found.measuredAt, '2026-12-01T10:00:00.000Z');
  // The same lab written differently (20ms or 0.02s) is the same lab.
  assert.ok(
    findCalibration(experiment('{ workers: 4, work: { dist: constant, mean: 0.02s } }'), 'local', {
      root: r,
      machine,
    }),
  );
  // The load's rate and the client are not part of the lab configuration.
  assert.ok(
    findCalibration(
      parseExperiment(
        JSON.stringify({ ...JSON.parse(JSON.stringify(experimentInput())), client: { timeout: '2s' } }),
        'y.yaml',
      ),
      'local',
      { root: r, machine },
    ),
  );
  // A new calibration replaces the old one.
  save(e, r, 190);
  assert.equal(findCalibration(e, 'local', { root: r, machine })?.capacityPerS, 190);
});

test('a different lab configuration, workload or machine does not match', () => {
  const r = root();
  save(experiment(four), r, 185);
  // Another worker count.
  assert.equal(
    findCalibration(experiment('{ workers: 5, work: { dist: constant, mean: 20ms } }'), 'local', {
      root: r,
      machine,
    }),
    null,
  );
  // Another work distribution.
  assert.equal(
    findCalibration(experiment('{ workers: 4, work: { dist: exponential, mean: 20ms } }'), 'local', {
      root: r,
      machine,
    }),
    null,
  );
  // A server-side mitigation.
  assert.equal(
    findCalibration(
      experiment('{ workers: 4, work: { dist: constant, mean: 20ms }, queueLimit: 10 }'),
      'local',
      { root: r, machine },
    ),
    null,
  );
  // Another arrival law (the workload).
  assert.equal(findCalibration(experiment(four, '  arrival: constant'), 'local', { root: r, machine }), null);
  // Another machine.
  assert.equal(
    findCalibration(experiment(four), 'local', { root: r, machine: { ...machine, cpus: machine.cpus + 2 } }),
    null,
  );
  // The same machine with another Node still matches, and says so.
  const newer = { ...machine, node: 'v99.0.0' };
  const found = findCalibration(experiment(four), 'local', { root: r, machine: newer });
  assert.ok(found);
  assert.match(measuredCapacity(found, newer).note ?? '', /Node .* then, v99\.0\.0 now/);
});

test('an unreadable or mismatching calibration file is ignored', () => {
  const r = root();
  const e = experiment(four);
  const file = save(e, r, 185);
  writeFileSync(file, '{ not json');
  assert.equal(findCalibration(e, 'local', { root: r, machine }), null);
  writeFileSync(file, JSON.stringify({ version: 1, capacityPerS: 0 }));
  assert.equal(findCalibration(e, 'local', { root: r, machine }), null);
});

test('% capacity resolves against the measured capacity when there is one, and says where it came from', () => {
  const r = root();
  const e = experiment(four);
  // Nominal: 4 workers / 20 ms = 200/s; 70% = 140/s.
  const nominal = planRun(e, { scale: 1, run: 1, ...capacityFor(e, 'local', 'auto', r) });
  assert.equal(nominal.ratePerS, 140);
  assert.equal(nominal.capacity.source, 'nominal');
  assert.equal(nominal.capacity.measuredPerS, null);
  assert.match(nominal.capacity.from, /nominal: 4 workers \/ 20 ms mean work \(no calibration/);

  save(e, r, 150);
  const measured = planRun(e, { scale: 1, run: 1, ...capacityFor(e, 'local', 'auto', r) });
  assert.equal(measured.ratePerS, 105); // 70% of the measured 150/s
  assert.equal(measured.load.peakPerS, 105);
  assert.deepEqual(
    { ...measured.capacity, calibration: undefined, from: undefined },
    {
      nominalPerS: 200,
      measuredPerS: 150,
      usedPerS: 150,
      source: 'measured',
      calibration: undefined,
      from: undefined,
    },
  );
  assert.match(measured.capacity.from, /measured by metabench calibrate on 2026-12-01T10:00:00.000Z/);
  assert.equal(measured.capacity.calibration?.resultsDir, '/tmp/results/x');
  // --dry-run says which capacity and where from.
  const text = formatDryRun(measured, dryRun(measured, 1), { name: 'local', virtualTime: false });
  assert.match(text, /capacity: 200\/s nominal, 150\/s measured; 150\/s used for % capacity/);
  assert.match(text, /from: measured by metabench calibrate/);
  assert.match(text, /runtime local/);

  // --capacity nominal ignores the calibration; --capacity measured insists on one.
  const forced = planRun(e, { scale: 1, run: 1, ...capacityFor(e, 'local', 'nominal', r) });
  assert.equal(forced.ratePerS, 140);
  assert.match(forced.capacity.from, /--capacity nominal/);
  assert.equal(capacityFor(e, 'local', 'measured', r).capacity?.perS, 150);
  assert.throws(
    () =>
      capacityFor(experiment('{ workers: 6, work: { dist: constant, mean: 20ms } }'), 'local', 'measured', r),
    (err: unknown) => err instanceof BenchError && /no calibration on this machine/.test(err.message),
  );
  // An absolute rate does not depend on capacity at all.
  const abs = planRun(
    { ...e, load: { ...e.load, rate: { perS: 90 } } },
    {
      scale: 1,
      run: 1,
      ...capacityFor(e, 'local', 'auto', r),
    },
  );
  assert.equal(abs.ratePerS, 90);
});

/** The small experiment as plain data (for variants that change a section). */
function experimentInput(): Record<string, unknown> {
  return {
    name: 'small',
    lab: { api: { workers: 4, work: { dist: 'constant', mean: '20ms' } } },
    load: { rate: '50% capacity' },
    client: { timeout: '500ms' },
    schedule: {
      warmup: '5s',
      baseline: '10s',
      trigger: { kind: 'pause', target: 'api', duration: '2s' },
      observe: '20s',
    },
    recovery: { within: '5x', tolerance: '10%', window: '2s', hold: '2s' },
  };
}

test('the nominal capacity over a mix whose classes name cost classes is c / the mean work of the mix', () => {
  const e = parseExperiment(
    [
      'name: mix',
      'lab:',
      '  api:',
      '    workers: 4',
      '    work: { dist: constant, mean: 10ms }',
      '    costs: { heavy: { dist: constant, mean: 50ms } }',
      'load:',
      '  rate: 50% capacity',
      '  mix:',
      '    - { name: read, share: 75% }',
      '    - { name: heavy, share: 25%, cost: heavy }',
      'client: { timeout: 500ms }',
      'schedule:',
      '  warmup: 5s',
      '  baseline: 10s',
      '  trigger: { kind: pause, target: api, duration: 2s }',
      '  observe: 20s',
      'recovery: { within: 5x, tolerance: 10%, window: 2s, hold: 2s }',
    ].join('\n'),
    'mix.yaml',
  );
  // Mean work 0.75 x 10 + 0.25 x 50 = 20 ms: 4 / 20 ms = 200/s.
  const p = planRun(e, { scale: 1, run: 1 });
  assert.equal(p.capacity.nominalPerS, 200);
  assert.equal(p.ratePerS, 100);
  assert.match(p.capacity.from, /4 workers \/ 20 ms mean work/);
});
